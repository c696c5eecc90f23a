/* Directive value parsers: strict, with messages. */
#include "adf_test.h"
#include <apr_general.h>
#include <string.h>
#include "adf_parse.h"

START_TEST(long_strict)
{
    long v = -7;

    ck_assert_ptr_null(adf_parse_long(pool, "6", 1, 9, &v));
    ck_assert_int_eq(v, 6);
    ck_assert_ptr_nonnull(adf_parse_long(pool, "6x", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, "", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, " 6", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, "+6", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, "0", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, "12", 1, 9, &v));
    ck_assert_ptr_nonnull(adf_parse_long(pool, "99999999999999999999999", 1,
                                         9, &v));
    ck_assert_ptr_null(adf_parse_long(pool, "-1", -5, 5, &v));
    ck_assert_int_eq(v, -1);
    ck_assert_int_eq(v, -1);    /* failed parses left it alone */
    ck_assert_ptr_nonnull(strstr(adf_parse_long(pool, "12", 1, 9, &v),
                                 "out of range (1 to 9)"));
    ck_assert_ptr_nonnull(strstr(adf_parse_long(pool, "6x", 1, 9, &v),
                                 "'6x' is not a whole number"));
}
END_TEST

/* The digit scan under marks and /proc/stat: stops at the first
 * non-digit, whatever its byte; refuses no digits and overflow. */
START_TEST(scan_u64)
{
    char buf[8];
    apr_uint64_t v = 7;
    const char *e;
    int ch;

    ck_assert((e = adf_scan_u64("0123x", &v)) != NULL);
    ck_assert_int_eq(v, 123);
    ck_assert_int_eq(*e, 'x');
    ck_assert(adf_scan_u64("18446744073709551609", &v) != NULL);
    ck_assert(adf_scan_u64("18446744073709551616", &v) == NULL);
    for (ch = 1; ch < 256; ch++) {
        buf[0] = '4';
        buf[1] = (char)ch;
        buf[2] = '2';
        buf[3] = '\0';
        e = adf_scan_u64(buf, &v);
        if (ch >= '0' && ch <= '9') {
            ck_assert_int_eq(e - buf, 3);
        }
        else {
            ck_assert_int_eq(e - buf, 1);
            ck_assert_int_eq(v, 4);
            ck_assert(adf_scan_u64(buf + 1, &v) == NULL);
        }
    }
}
END_TEST

START_TEST(sizes)
{
    apr_off_t v;

    ck_assert_ptr_null(adf_parse_size(pool, "0", &v));
    ck_assert_int_eq(v, 0);
    ck_assert_ptr_null(adf_parse_size(pool, "1500", &v));
    ck_assert_int_eq(v, 1500);
    ck_assert_ptr_null(adf_parse_size(pool, "64k", &v));
    ck_assert_int_eq(v, 65536);
    ck_assert_ptr_null(adf_parse_size(pool, "4M", &v));
    ck_assert_int_eq(v, 4 << 20);
    ck_assert_ptr_null(adf_parse_size(pool, "2g", &v));
    ck_assert_int_eq(v, (apr_off_t)2 << 30);
    ck_assert_ptr_nonnull(adf_parse_size(pool, "64kb", &v));
    ck_assert_ptr_nonnull(adf_parse_size(pool, "k", &v));
    ck_assert_ptr_nonnull(adf_parse_size(pool, "-1", &v));
    ck_assert_ptr_nonnull(adf_parse_size(pool, "1.5k", &v));
    ck_assert_ptr_nonnull(adf_parse_size(pool, "99999999999999999g", &v));
}
END_TEST

START_TEST(percent_and_interval)
{
    int pct;
    apr_interval_time_t t;
    const apr_interval_time_t lo = apr_time_from_msec(100);
    const apr_interval_time_t hi = apr_time_from_sec(60);

    ck_assert_ptr_null(adf_parse_percent(pool, "80", &pct));
    ck_assert_int_eq(pct, 80);
    ck_assert_ptr_null(adf_parse_percent(pool, "95%", &pct));
    ck_assert_int_eq(pct, 95);
    ck_assert_ptr_nonnull(adf_parse_percent(pool, "101", &pct));
    ck_assert_ptr_nonnull(adf_parse_percent(pool, "80%%", &pct));
    ck_assert_ptr_nonnull(adf_parse_percent(pool, "8O", &pct));

    ck_assert_ptr_null(adf_parse_interval(pool, "250ms", lo, hi, &t));
    ck_assert_int_eq(t, apr_time_from_msec(250));
    ck_assert_ptr_null(adf_parse_interval(pool, "2s", lo, hi, &t));
    ck_assert_int_eq(t, apr_time_from_sec(2));
    ck_assert_ptr_null(adf_parse_interval(pool, "1", lo, hi, &t));
    ck_assert_int_eq(t, apr_time_from_sec(1));
    ck_assert_ptr_nonnull(adf_parse_interval(pool, "50ms", lo, hi, &t));
    ck_assert_ptr_nonnull(adf_parse_interval(pool, "61s", lo, hi, &t));
    ck_assert_ptr_nonnull(adf_parse_interval(pool, "1m", lo, hi, &t));
    ck_assert_ptr_nonnull(adf_parse_interval(pool, "ms", lo, hi, &t));
}
END_TEST

START_TEST(size_levels)
{
    apr_off_t size;
    int level;

    ck_assert_ptr_null(adf_parse_size_level(pool, "64k:9", &size, &level));
    ck_assert_int_eq(size, 65536);
    ck_assert_int_eq(level, 9);
    ck_assert_ptr_null(adf_parse_size_level(pool, "*:1", &size, &level));
    ck_assert_int_eq(size, ADF_SIZE_ANY);
    ck_assert_ptr_null(adf_parse_size_level(pool, "unknown:6", &size,
                                            &level));
    ck_assert_int_eq(size, ADF_SIZE_UNKNOWN);
    ck_assert_ptr_nonnull(adf_parse_size_level(pool, "64k", &size, &level));
    ck_assert_ptr_nonnull(adf_parse_size_level(pool, "64k:10", &size,
                                               &level));
    ck_assert_ptr_nonnull(adf_parse_size_level(pool, "64x:1", &size,
                                               &level));
    ck_assert_ptr_nonnull(adf_parse_size_level(pool, ":1", &size, &level));
}
END_TEST

START_TEST(rates)
{
    double r = 0;

    ck_assert_ptr_null(adf_parse_rate(pool, "800mbit", &r));
    ck_assert(r == 100e6);
    ck_assert_ptr_null(adf_parse_rate(pool, "1Gbit", &r));
    ck_assert(r == 125e6);
    ck_assert_ptr_null(adf_parse_rate(pool, "64kbit", &r));
    ck_assert(r == 8000);
    ck_assert_ptr_nonnull(adf_parse_rate(pool, "800", &r));
    ck_assert_ptr_nonnull(adf_parse_rate(pool, "800mb", &r));
    ck_assert_ptr_nonnull(adf_parse_rate(pool, "0mbit", &r));
    ck_assert_ptr_nonnull(adf_parse_rate(pool, "mbit", &r));
    ck_assert_ptr_nonnull(adf_parse_rate(pool, "1.5gbit", &r));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("parse");

    adf_test(s, long_strict);
    adf_test(s, scan_u64);
    adf_test(s, sizes);
    adf_test(s, percent_and_interval);
    adf_test(s, size_levels);
    adf_test(s, rates);
    return adf_test_run(s);
}
