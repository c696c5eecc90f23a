/* For codec implementations only: the stream's fields and the vtable a
 * codec fills in.  Everything else sees adf_codec.h's opaque stream. */
#ifndef ADF_CODEC_IMPL_H
#define ADF_CODEC_IMPL_H

#include "adf_codec.h"

struct adf_codec_t {
    /* Set up the coder's state in s->state, sized for size_hint bytes of
     * input (-1 when unknown).  APR_ENOMEM or APR_EGENERAL on failure. */
    apr_status_t (*open)(adf_stream_t *s, int level, apr_off_t size_hint);
    apr_status_t (*write)(adf_stream_t *s, const char *data, apr_size_t len,
                          adf_op_e op);
    void (*free)(adf_stream_t *s);
    /* Add n bytes of padding to the header (NULL: no header to pad).
     * Called before the first write. */
    apr_status_t (*pad)(adf_stream_t *s, apr_size_t n);
};

struct adf_stream_t {
    const adf_coding_t *coding;
    void *state;
    apr_pool_t *pool;
    adf_sink_fn *sink;
    void *baton;
    unsigned char *buf;
    apr_size_t bufsize;
    apr_off_t bytes_in;
    apr_off_t bytes_out;
    int level;
    int finished;
};

/* Hand n bytes of s->buf to the sink. */
apr_status_t adf_stream_emit(adf_stream_t *s, apr_size_t n);

extern const adf_coding_t adf_coding_gzip;
#ifdef ADF_HAVE_BROTLI
extern const adf_coding_t adf_coding_brotli;
#endif

#endif /* ADF_CODEC_IMPL_H */
