/* gzip through libdeflate: the whole input at once (a static file, a
 * complete first brigade), at a half to a ninth of zlib's CPU for the
 * same compression; it cannot stream, so the coding picks it only for a
 * stream opened with ADF_STREAM_WHOLE. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_LIBDEFLATE
#include <libdeflate.h>

#include <stdlib.h>

/* A compressor keeps nothing of one input for the next: they are reused
 * for their level rather than allocated per response. */
typedef struct {
    adf_idle_t idle;    /* first: the idle list's link */
    struct libdeflate_compressor *c;
} ld_t;

static void ld_destroy(adf_idle_t *e)
{
    libdeflate_free_compressor(((ld_t *)e)->c);
    free(e);
}

static adf_idle_list_t ld_idle = { ld_destroy };

/* libdeflate's compressor for a level: the structure holds its match
 * finder's tables (measured, libdeflate 1.14 on x86-64: 198 KB at level
 * 1, 652 KB at 2-9, 8.6 MB at 10-12, the cache's strongest). */
static apr_size_t ld_bytes(int level)
{
    return level >= 10 ? 8798 * 1024 : level >= 2 ? 652 * 1024 : 198 * 1024;
}

static apr_status_t ld_open(adf_stream_t *s, apr_off_t hint)
{
    ld_t *st = (ld_t *)adf_idle_take(&ld_idle, (apr_uint32_t)s->blevel, 0);

    if (!st) {
        if (!(st = calloc(1, sizeof(*st)))) {
            return APR_ENOMEM;
        }
        if (!(st->c = libdeflate_alloc_compressor(s->blevel))) {
            free(st);
            return APR_ENOMEM;
        }
    }
    s->state = st;
    return APR_SUCCESS;
}

static apr_status_t ld_write(adf_stream_t *s, const char *data,
                             apr_size_t len, adf_op_e op)
{
    struct libdeflate_compressor *c = ((ld_t *)s->state)->c;
    size_t bound = libdeflate_gzip_compress_bound(c, len), n;
    unsigned char *out = apr_palloc(s->pool, bound);

    n = libdeflate_gzip_compress(c, data, len, out, bound);
    return n ? adf_stream_emit(s, out, n) : APR_EGENERAL;
}

static void ld_free(adf_stream_t *s)
{
    adf_idle_put(&ld_idle, s->state, (apr_uint32_t)s->blevel,
                 ld_bytes(s->blevel));
}

static const adf_prior_t libdeflate_prior[] = {
    { 1.46f, 0.1508f }, /* 1 */
    { 3.21f, 0.1484f }, /* 2 */
    { 3.45f, 0.1436f }, /* 3 */
    { 3.68f, 0.1404f }, /* 4 */
    { 4.28f, 0.1380f }, /* 5 */
    { 5.31f, 0.1351f }, /* 6 */
    { 7.06f, 0.1325f }, /* 7 */
    { 11.96f, 0.1317f }, /* 8 */
    { 13.82f, 0.1316f }, /* 9 */
    { 67.12f, 0.1302f }, /* 10 */
    { 128.8f, 0.1281f }, /* 11 */
    { 189.4f, 0.1280f }, /* 12 */
};

const adf_backend_t adf_backend_libdeflate = {
    "libdeflate", libdeflate_prior, 1, 12,
    ld_open, ld_write, ld_free, NULL
};
#endif /* ADF_HAVE_LIBDEFLATE */
