/* Codec registry and the stream life cycle shared by every codec. */
#include "config.h"
#include "adf_codec.h"

#define ADF_DEFAULT_BUFSIZE 8000
/* zlib needs more than 6 bytes of room per call while flushing, or it
 * writes a new flush marker every call and never finishes. */
#define ADF_MIN_BUFSIZE 64

const adf_codec_t *adf_codec_get(adf_coding_e coding)
{
    switch (coding) {
    case ADF_GZIP:
        return &adf_codec_gzip;
#ifdef ADF_HAVE_BROTLI
    case ADF_BR:
        return &adf_codec_brotli;
#endif
    default:
        return NULL;
    }
}

static apr_status_t stream_cleanup(void *data)
{
    adf_stream_t *s = data;

    if (s->state) {
        s->codec->free(s);
        s->state = NULL;
    }
    return APR_SUCCESS;
}

apr_status_t adf_stream_open(adf_stream_t **sp, apr_pool_t *p,
                             adf_coding_e coding, int level,
                             apr_off_t size_hint, apr_size_t bufsize,
                             adf_sink_fn *sink, void *baton)
{
    const adf_codec_t *codec = adf_codec_get(coding);
    adf_stream_t *s;
    apr_status_t rv;

    if (!codec) {
        return APR_ENOTIMPL;
    }
    if (level < codec->min_level || level > codec->max_level) {
        return APR_EINVAL;
    }
    s = apr_pcalloc(p, sizeof(*s));
    s->codec = codec;
    s->pool = p;
    s->sink = sink;
    s->baton = baton;
    s->level = level;
    s->bufsize = !bufsize ? ADF_DEFAULT_BUFSIZE
               : bufsize < ADF_MIN_BUFSIZE ? ADF_MIN_BUFSIZE : bufsize;
    s->buf = apr_palloc(p, s->bufsize);
    if ((rv = codec->open(s, level, size_hint)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_cleanup_register(p, s, stream_cleanup, apr_pool_cleanup_null);
    *sp = s;
    return APR_SUCCESS;
}

apr_status_t adf_stream_write(adf_stream_t *s, const char *data,
                              apr_size_t len, adf_op_e op)
{
    if (s->finished) {
        return len ? APR_EOF : APR_SUCCESS;
    }
    s->bytes_in += len;
    if (op == ADF_OP_FINISH) {
        s->finished = 1;
    }
    return s->codec->write(s, data, len, op);
}

apr_status_t adf_stream_pad(adf_stream_t *s, apr_size_t n)
{
    if (!s->codec->pad) {
        return APR_ENOTIMPL;
    }
    if (s->bytes_in || s->bytes_out || s->finished) {
        return APR_EINVAL;
    }
    return s->codec->pad(s, n);
}

void adf_stream_close(adf_stream_t *s)
{
    apr_pool_cleanup_run(s->pool, s, stream_cleanup);
}

apr_status_t adf_stream_emit(adf_stream_t *s, apr_size_t n)
{
    if (!n) {
        return APR_SUCCESS;
    }
    s->bytes_out += n;
    return s->sink(s->baton, (const char *)s->buf, n);
}
