/* gzip through zlib: the streaming backend for every level, and the only
 * one that can pad its header.  zlib writes the gzip header and trailer
 * itself. */
#include "config.h"
#include "adf_codec_impl.h"

#include <zlib.h>

#include <stdlib.h>

typedef struct {
    adf_idle_t idle;    /* first: the idle list's link */
    z_stream z;
    int flush;          /* of the write in progress */
    int wbits, memlevel;
} zlib_t;

/* Streams are reused (deflateReset, deflateParams for another level)
 * where their window and hash sizes match, rather than 270 KB of malloc
 * in five blocks per response (the reset still clears the hash). */
static void zlib_destroy(adf_idle_t *e)
{
    zlib_t *st = (zlib_t *)e;

    deflateEnd(&st->z);
    free(st);
}

static adf_idle_list_t zlib_idle = { zlib_destroy };

/* deflateInit2's memory for these sizes (zlib.h, "deflate memory"). */
static apr_size_t zlib_bytes(int wbits, int memlevel)
{
    return ((apr_size_t)1 << (wbits + 2)) + ((apr_size_t)1 << (memlevel + 9))
           + sizeof(zlib_t) + 6000;
}

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
    zlib_t *st;
    int wbits, memlevel, rc;

    size_params(hint, &wbits, &memlevel);
    if ((st = (zlib_t *)adf_idle_take(&zlib_idle,
                                      (apr_uint32_t)(wbits << 8 | memlevel),
                                      0))) {
        /* reset when it went idle: only the level may differ */
        if (deflateParams(&st->z, s->blevel, Z_DEFAULT_STRATEGY) != Z_OK) {
            zlib_destroy(&st->idle);
            return APR_EGENERAL;
        }
        s->state = st;
        return APR_SUCCESS;
    }
    if (!(st = calloc(1, sizeof(*st)))) {
        return APR_ENOMEM;
    }
    st->wbits = wbits;
    st->memlevel = memlevel;
    rc = deflateInit2(&st->z, s->blevel, Z_DEFLATED, wbits + 16, memlevel,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        free(st);
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

/* The stream is over, finished or not: reset, and idle until the next
 * one.  The reset keeps a padded gzip header, which lives in the stream's
 * pool: it is dropped here. */
static void zlib_free(adf_stream_t *s)
{
    zlib_t *st = s->state;

    if (deflateReset(&st->z) != Z_OK
        || deflateSetHeader(&st->z, Z_NULL) != Z_OK) {
        zlib_destroy(&st->idle);
        return;
    }
    adf_idle_put(&zlib_idle, &st->idle,
                 (apr_uint32_t)(st->wbits << 8 | st->memlevel),
                 zlib_bytes(st->wbits, st->memlevel));
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
