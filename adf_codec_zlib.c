/* gzip through zlib: the streaming backend for every level, and the only
 * one that can pad its header.  zlib writes the gzip header and trailer
 * itself. */
#include "config.h"
#include "adf_codec_impl.h"

#include <zlib.h>

typedef struct {
    z_stream z;
    int flush;          /* of the write in progress */
} zlib_t;

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

static apr_status_t zlib_open(adf_stream_t *s, apr_off_t hint)
{
    zlib_t *st = apr_pcalloc(s->pool, sizeof(*st));
    int wbits, memlevel, rc;

    size_params(hint, &wbits, &memlevel);
    rc = deflateInit2(&st->z, s->blevel, Z_DEFLATED, wbits + 16, memlevel,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        return rc == Z_MEM_ERROR ? APR_ENOMEM : APR_EGENERAL;
    }
    s->state = st;
    return APR_SUCCESS;
}

static apr_status_t zlib_step(adf_stream_t *s, apr_size_t *produced,
                              int *done)
{
    zlib_t *st = s->state;
    z_stream *z = &st->z;
    int rc;

    z->next_out = s->buf;
    z->avail_out = (uInt)s->bufsize;
    rc = deflate(z, st->flush);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        return APR_EGENERAL;
    }
    *produced = s->bufsize - z->avail_out;
    /* Done when input is consumed and deflate left output room: for a
     * flush that means the flush marker is out, too. */
    *done = rc == Z_STREAM_END
            || (z->avail_in == 0 && z->avail_out != 0
                && st->flush != Z_FINISH);
    return APR_SUCCESS;
}

static apr_status_t zlib_write(adf_stream_t *s, const char *data,
                               apr_size_t len, adf_op_e op)
{
    zlib_t *st = s->state;

    st->flush = op == ADF_OP_FINISH ? Z_FINISH
              : op == ADF_OP_FLUSH ? Z_SYNC_FLUSH : Z_NO_FLUSH;
    st->z.next_in = (Bytef *)data;
    st->z.avail_in = (uInt)len;
    return adf_stream_pump(s, zlib_step);
}

static void zlib_free(adf_stream_t *s)
{
    deflateEnd(&((zlib_t *)s->state)->z);
}

/* Length hiding: an FEXTRA field of n bytes (one subfield "LH" of n - 4
 * zero bytes; decoders skip it).  The header lives in the stream's pool
 * until deflate has written it. */
static apr_status_t zlib_pad(adf_stream_t *s, apr_size_t n)
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
    return deflateSetHeader(&((zlib_t *)s->state)->z, h) == Z_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

static const adf_prior_t zlib_prior[] = {
    { 9.52f, 0.1665f }, /* 1 */
    { 9.65f, 0.1590f }, /* 2 */
    { 10.15f, 0.1558f }, /* 3 */
    { 11.62f, 0.1434f }, /* 4 */
    { 13.09f, 0.1376f }, /* 5 */
    { 15.81f, 0.1339f }, /* 6 */
    { 17.68f, 0.1335f }, /* 7 */
    { 21.09f, 0.1326f }, /* 8 */
    { 21.88f, 0.1325f }, /* 9 */
};

const adf_backend_t adf_backend_zlib = {
    "zlib", zlib_prior, 1, 9,
    zlib_open, zlib_write, zlib_free, zlib_pad
};
