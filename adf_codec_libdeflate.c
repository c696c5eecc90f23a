/* gzip through libdeflate: the whole input at once (a static file, a
 * complete first brigade), at a half to a ninth of zlib's CPU for the
 * same compression; it cannot stream, so the coding picks it only for a
 * stream opened with ADF_STREAM_WHOLE. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_LIBDEFLATE
#include <libdeflate.h>

static apr_status_t ld_open(adf_stream_t *s, apr_off_t hint)
{
    s->state = libdeflate_alloc_compressor(s->blevel);
    return s->state ? APR_SUCCESS : APR_ENOMEM;
}

static apr_status_t ld_write(adf_stream_t *s, const char *data,
                             apr_size_t len, adf_op_e op)
{
    size_t bound = libdeflate_gzip_compress_bound(s->state, len), n;
    unsigned char *out = apr_palloc(s->pool, bound);

    n = libdeflate_gzip_compress(s->state, data, len, out, bound);
    return n ? adf_stream_emit(s, out, n) : APR_EGENERAL;
}

static void ld_free(adf_stream_t *s)
{
    libdeflate_free_compressor(s->state);
}

const adf_backend_t adf_backend_libdeflate = {
    "libdeflate", ld_open, ld_write, ld_free, NULL
};
#endif /* ADF_HAVE_LIBDEFLATE */
