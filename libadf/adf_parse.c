/* Strict directive value parsers: "6x" is not 6. */
#include "adf_parse.h"

#include <apr_strings.h>
#include <apr_lib.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *adf_scan_u64(const char *s, apr_uint64_t *v)
{
    apr_uint64_t n = 0;
    const char *start = s;

    /* not apr_isdigit: the ctype lookup is a libc call per digit, and
     * this reads every sibling's mark and every sample of /proc/stat */
    while ((unsigned)(*s - '0') < 10) {
        if (n > (APR_UINT64_MAX - 9) / 10) {
            return NULL;
        }
        n = n * 10 + (apr_uint64_t)(*s - '0');
        s++;
    }
    if (s == start) {
        return NULL;
    }
    *v = n;
    return s;
}

const char *adf_parse_long(apr_pool_t *p, const char *arg, long min, long max,
                           long *out)
{
    apr_uint64_t u;
    apr_int64_t v;
    const char *end;
    int neg = 0;
    const char *s = arg;

    if (*s == '-') {
        neg = 1;
        s++;
    }
    end = adf_scan_u64(s, &u);
    if (!end || *end) {
        return apr_psprintf(p, "'%s' is not a whole number", arg);
    }
    if (u > (apr_uint64_t)APR_INT64_MAX) {
        return apr_psprintf(p, "%s is out of range (%ld to %ld)", arg, min,
                            max);
    }
    v = neg ? -(apr_int64_t)u : (apr_int64_t)u;
    if (v < min || v > max) {
        return apr_psprintf(p, "%s is out of range (%ld to %ld)", arg, min,
                            max);
    }
    *out = (long)v;
    return NULL;
}

const char *adf_parse_size(apr_pool_t *p, const char *arg, apr_off_t *out)
{
    apr_uint64_t v;
    int shift = 0;
    const char *end = adf_scan_u64(arg, &v);

    if (!end) {
        return apr_psprintf(p, "'%s' is not a size (bytes, or a number "
                            "with k, m or g)", arg);
    }
    switch (apr_tolower(*end)) {
    case '\0': break;
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    default: end = NULL;
    }
    if (!end || *end) {
        return apr_psprintf(p, "'%s' is not a size (bytes, or a number "
                            "with k, m or g)", arg);
    }
    if (v > ((apr_uint64_t)APR_INT64_MAX >> shift)) {
        return apr_psprintf(p, "'%s' is too large", arg);
    }
    *out = (apr_off_t)(v << shift);
    return NULL;
}

const char *adf_parse_percent(apr_pool_t *p, const char *arg, int *out)
{
    apr_uint64_t v;
    const char *end = adf_scan_u64(arg, &v);

    if (end && *end == '%') {
        end++;
    }
    if (!end || *end) {
        return apr_psprintf(p, "'%s' is not a percentage", arg);
    }
    if (v > 100) {
        return apr_psprintf(p, "%s is out of range (0 to 100)", arg);
    }
    *out = (int)v;
    return NULL;
}

const char *adf_parse_interval(apr_pool_t *p, const char *arg,
                               apr_interval_time_t min,
                               apr_interval_time_t max,
                               apr_interval_time_t *out)
{
    apr_uint64_t v;
    apr_interval_time_t t;
    const char *end = adf_scan_u64(arg, &v);

    if (!end || v > APR_UINT64_C(1000000000)) {
        return apr_psprintf(p, "'%s' is not a duration (e.g. 250ms or 2s)",
                            arg);
    }
    if (!strcmp(end, "ms")) {
        t = apr_time_from_msec((apr_interval_time_t)v);
    }
    else if (!*end || !strcmp(end, "s")) {
        t = apr_time_from_sec((apr_interval_time_t)v);
    }
    else {
        return apr_psprintf(p, "'%s' is not a duration (e.g. 250ms or 2s)",
                            arg);
    }
    if (t < min || t > max) {
        return apr_psprintf(p, "%s is out of range (%" APR_TIME_T_FMT "ms to %"
                            APR_TIME_T_FMT "ms)", arg, apr_time_as_msec(min),
                            apr_time_as_msec(max));
    }
    *out = t;
    return NULL;
}

const char *adf_parse_rate(apr_pool_t *p, const char *arg, double *out)
{
    static const struct {
        const char *unit;
        double bits;
    } units[] = { { "kbit", 1e3 }, { "mbit", 1e6 }, { "gbit", 1e9 } };
    apr_uint64_t v;
    const char *end = adf_scan_u64(arg, &v);
    int i;

    for (i = 0; end && v > 0 && i < 3; i++) {
        if (!strcasecmp(end, units[i].unit)) {
            *out = (double)v * units[i].bits / 8;
            return NULL;
        }
    }
    return apr_psprintf(p, "'%s' is not a rate (e.g. 800mbit: a positive "
                        "number with kbit, mbit or gbit)", arg);
}

const char *adf_parse_size_level(apr_pool_t *p, const char *arg,
                                 apr_off_t *size, int *level)
{
    const char *colon = strchr(arg, ':');
    const char *err;
    char *what;
    long l;

    if (!colon) {
        return apr_psprintf(p, "'%s' is not SIZE:LEVEL", arg);
    }
    what = apr_pstrmemdup(p, arg, colon - arg);
    if (!strcmp(what, "*")) {
        *size = ADF_SIZE_ANY;
    }
    else if (!strcasecmp(what, "unknown")) {
        *size = ADF_SIZE_UNKNOWN;
    }
    else if ((err = adf_parse_size(p, what, size)) != NULL) {
        return apr_psprintf(p, "in '%s': %s", arg, err);
    }
    if ((err = adf_parse_long(p, colon + 1, 1, 9, &l)) != NULL) {
        return apr_psprintf(p, "in '%s': level %s", arg, err);
    }
    *level = (int)l;
    return NULL;
}
