/* gzip through zlib: zlib writes the gzip header and trailer itself. */
#include "config.h"
#include "adf_codec_impl.h"

#include <zlib.h>

/* Shrink the window and hash for small known inputs, as nginx does: a
 * 32 KiB window and 128 KiB of hash for a 2 KiB page is wasted set-up. */
static void size_params(apr_off_t hint, int *wbits, int *memlevel)
{
    *wbits = MAX_WBITS;
    *memlevel = 8;
    if (hint > 0) {
        while (hint < ((apr_off_t)1 << (*wbits - 1)) && *wbits > 9) {
            (*wbits)--;
            (*memlevel)--;
        }
        if (*memlevel < 1) {
            *memlevel = 1;
        }
    }
}

static apr_status_t gzip_open(adf_stream_t *s, int level, apr_off_t hint)
{
    z_stream *z = apr_pcalloc(s->pool, sizeof(*z));
    int wbits, memlevel, rc;

    size_params(hint, &wbits, &memlevel);
    rc = deflateInit2(z, level, Z_DEFLATED, wbits + 16, memlevel,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        return rc == Z_MEM_ERROR ? APR_ENOMEM : APR_EGENERAL;
    }
    s->state = z;
    return APR_SUCCESS;
}

static apr_status_t gzip_write(adf_stream_t *s, const char *data,
                               apr_size_t len, adf_op_e op)
{
    z_stream *z = s->state;
    int flush = op == ADF_OP_FINISH ? Z_FINISH
              : op == ADF_OP_FLUSH ? Z_SYNC_FLUSH : Z_NO_FLUSH;
    apr_status_t rv;
    int rc;

    z->next_in = (Bytef *)data;
    z->avail_in = (uInt)len;
    for (;;) {
        z->next_out = s->buf;
        z->avail_out = (uInt)s->bufsize;
        rc = deflate(z, flush);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            return APR_EGENERAL;
        }
        rv = adf_stream_emit(s, s->bufsize - z->avail_out);
        if (rv != APR_SUCCESS) {
            return rv;
        }
        if (rc == Z_STREAM_END) {
            break;
        }
        /* Done when input is consumed and deflate left output room:
         * for a flush that means the flush marker is out, too. */
        if (z->avail_in == 0 && z->avail_out != 0 && flush != Z_FINISH) {
            break;
        }
    }
    return APR_SUCCESS;
}

static void gzip_free(adf_stream_t *s)
{
    deflateEnd(s->state);
}

/* Length hiding: an FEXTRA field of n bytes (one subfield "LH" of n - 4
 * zero bytes; decoders skip it).  The header lives in the stream's pool
 * until deflate has written it. */
static apr_status_t gzip_pad(adf_stream_t *s, apr_size_t n)
{
    gz_header *h;

    if (n < 4) {
        return n ? APR_EINVAL : APR_SUCCESS;
    }
    if (n > 65535) {
        return APR_EINVAL;
    }
    h = apr_pcalloc(s->pool, sizeof(*h));
    h->extra = apr_pcalloc(s->pool, n);
    h->extra_len = (uInt)n;
    h->extra_max = (uInt)n;
    h->extra[0] = 'L';
    h->extra[1] = 'H';
    h->extra[2] = (Bytef)((n - 4) & 0xff);
    h->extra[3] = (Bytef)((n - 4) >> 8);
    h->os = 3;      /* Unix, as zlib's default header says */
    return deflateSetHeader(s->state, h) == Z_OK ? APR_SUCCESS : APR_EGENERAL;
}

static const adf_codec_t gzip_codec = {
    gzip_open, gzip_write, gzip_free, gzip_pad
};

const adf_coding_t adf_coding_gzip = {
    ADF_GZIP, "gzip", "x-gzip", ".gz", "-ad-gzip", "level",
    1, 9,       /* zlib's levels */
    1, 9,       /* the controller's default range */
    9,          /* siblings and the cache */
    &gzip_codec
};
