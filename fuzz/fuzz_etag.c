/* libFuzzer: a client's conditional headers (If-None-Match, If-Match,
 * If-Range) read as entity tags.  Oracle: every tag read lies inside the
 * header, its base inside the tag, a digest's hex inside its opaque part;
 * a 304's tag is one of the client's own; the list shown to the handler
 * is bounded and reads back; nothing crashes or reads out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include "adf_etag.h"

static const unsigned char dict[32] = { 0x01, 0x23, 0x45, 0x67,
                                        0x89, 0xab, 0xcd, 0xef };

static void check_tags(const char *s, size_t size)
{
    const char *p = s;
    adf_tag_t t;

    while (adf_tag_next(&p, &t)) {
        if (t.text < s || t.text + t.len > s + size || !t.len
            || p < s || p > s + size) {
            abort();
        }
        if (t.kind == ADF_TAG_ANY) {
            continue;
        }
        if (t.opaque <= t.text || t.base_len > t.opaque_len
            || t.opaque + t.opaque_len > t.text + t.len) {
            abort();
        }
        if (t.hex && (t.hex < t.opaque
                      || t.hex + ADF_ETAG_HEX > t.opaque + t.opaque_len)) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static apr_pool_t *pool;
    char *s = malloc(size + 1), *etag;
    const char *p = s, *pick, *shown;
    adf_accept_t acc;
    adf_tag_now_t now;
    apr_size_t len;
    adf_tag_t t;
    int strong;

    if (!pool) {
        apr_initialize();
        apr_pool_create(&pool, NULL);
    }
    memcpy(s, data, size);
    s[size] = '\0';
    check_tags(s, size);
    adf_accept_parse("gzip, br, zstd, dcz", &acc);
    memset(&now, 0, sizeof(now));
    now.accept = &acc;
    now.dict = dict;
    now.stored = "-ad-gzip-pre.0123456789abcdef";
    now.chosen = ADF_GZIP;
    /* the content's tag: the first one in the input, or none */
    etag = adf_tag_next(&p, &t) && t.kind != ADF_TAG_ANY
           ? apr_pstrmemdup(pool, t.text, t.len) : NULL;
    if (adf_tag_not_modified(s, etag, &now, &pick, &len) && pick
        && (pick < s || pick + len > s + size)) {
        abort();
    }
    for (strong = 0; strong < 2; strong++) {
        shown = adf_tag_for_handler(pool, s, &now, strong);
        len = strlen(shown);
        if (shown != s && len > 2 * size + sizeof(ADF_ETAG_NONE)) {
            abort();
        }
        check_tags(shown, len);
    }
    adf_tag_range_ok(s, etag, 0);
    adf_tag_range_ok(s, etag, 1);
    if (etag) {
        adf_etag_suffixed(pool, etag, "-ad-gzip", 1);
    }
    apr_pool_clear(pool);
    free(s);
    return 0;
}
