/* libFuzzer: the Structured Field items of dictionary transport, and the
 * match pattern derived from a path.  Oracles: what parses serializes
 * back to something that parses to the same value; a pattern is never
 * shorter than the wildcards it made, and escapes what it must. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_input.h"
#include "adf_sf.h"
#include "adf_dictmatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char h[32], back[32];
    char str[1025], again[1025];
    const char *q, *m;
    apr_pool_t *p;
    char *s = fuzz_string(&p, data, size);

    if (!adf_sf_binary(s, h, sizeof(h))
        && (adf_sf_binary(adf_sf_bytes(p, h, sizeof(h)), back, sizeof(back))
            || memcmp(h, back, sizeof(h)))) {
        abort();
    }
    if (!adf_sf_string(s, str, 1024)) {
        if (!(q = adf_sf_quote(p, str)) || adf_sf_string(q, again, 1024)
            || strcmp(str, again)) {
            abort();
        }
    }
    if (!strchr(s, '?')) {
        m = adf_dict_match(p, s);
        /* every special character of the input stays escaped */
        if (strlen(m) > 2 * strlen(s) || (strchr(s, '(') && !strstr(m, "\\("))) {
            abort();
        }
    }
    apr_pool_destroy(p);
    return 0;
}
