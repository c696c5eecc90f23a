/* libFuzzer: every directive value parser.  Oracle: a value accepted is
 * within its bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_input.h"
#include "adf_parse.h"
#include "adf_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    char *s;
    long l;
    apr_off_t off;
    int pct, level;
    apr_interval_time_t t;
    adf_source_e src;
    const char *path;

    s = fuzz_string(&p, data, size);
    if (!adf_parse_long(p, s, -5, 11, &l) && (l < -5 || l > 11)) {
        abort();
    }
    if (!adf_parse_size(p, s, &off) && off < 0) {
        abort();
    }
    if (!adf_parse_percent(p, s, &pct) && (pct < 0 || pct > 100)) {
        abort();
    }
    if (!adf_parse_interval(p, s, apr_time_from_msec(100),
                            apr_time_from_sec(60), &t)
        && (t < apr_time_from_msec(100) || t > apr_time_from_sec(60))) {
        abort();
    }
    if (!adf_parse_size_level(p, s, &off, &level)
        && (level < 1 || level > 9 || off < ADF_SIZE_UNKNOWN)) {
        abort();
    }
    if (!adf_parse_source(p, s, &src, &path) && src == ADF_SRC_FILE
        && (!path || !*path)) {
        abort();
    }
    apr_pool_destroy(p);
    return 0;
}
