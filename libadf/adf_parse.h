/* Strict parsers for directive values.  Pure: no httpd, only APR.
 *
 * Each adf_parse_* returns NULL on success or an error message allocated
 * from p that says what was wrong with the value (the caller adds the
 * directive name; httpd adds the file and line).  The other conventions
 * of libadf: parsers of what the kernel or a file says (adf_load.h's,
 * adf_mark_parse) return 0 or -1; adf_scan_* return where they stopped,
 * or NULL.
 */
#ifndef ADF_PARSE_H
#define ADF_PARSE_H

#include <apr_pools.h>
#include <apr_time.h>

/* Leading decimal digits of s into *v, refusing overflow: the first
 * character after them, or NULL when there is no digit or too many. */
const char *adf_scan_u64(const char *s, apr_uint64_t *v);

/* A whole decimal number in [min, max]: "6x", "", "+", " 6" are refused. */
const char *adf_parse_long(apr_pool_t *p, const char *arg, long min, long max,
                           long *out);

/* A byte count with an optional k, m or g suffix (powers of 1024). */
const char *adf_parse_size(apr_pool_t *p, const char *arg, apr_off_t *out);

/* A percentage 0..100, with or without a trailing '%'. */
const char *adf_parse_percent(apr_pool_t *p, const char *arg, int *out);

/* A duration: "250ms", "2s" or a bare number of seconds, in [min, max]. */
const char *adf_parse_interval(apr_pool_t *p, const char *arg,
                               apr_interval_time_t min,
                               apr_interval_time_t max,
                               apr_interval_time_t *out);

/* A bit rate: a number with kbit, mbit or gbit (powers of 1000), e.g.
 * "800mbit"; *out in bytes per second. */
const char *adf_parse_rate(apr_pool_t *p, const char *arg, double *out);

/* A size cap "SIZE:LEVEL", "*:LEVEL" (any size) or "unknown:LEVEL"
 * (no known length); *size is -1 for '*' and -2 for 'unknown'. */
#define ADF_SIZE_ANY     ((apr_off_t)-1)
#define ADF_SIZE_UNKNOWN ((apr_off_t)-2)
const char *adf_parse_size_level(apr_pool_t *p, const char *arg,
                                 apr_off_t *size, int *level);

#endif /* ADF_PARSE_H */
