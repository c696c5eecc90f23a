/* The codec interface: one small vtable per coding.  Pure: no httpd.
 *
 * A stream compresses what it is given and hands finished output to a sink
 * in chunks of at most the buffer size given at open; the caller decides
 * what a chunk becomes (a bucket, a file write, a test buffer).
 */
#ifndef ADF_CODEC_H
#define ADF_CODEC_H

#include <apr_pools.h>
#include "adf_negotiate.h"

typedef enum {
    ADF_OP_WRITE,       /* compress, emit what is ready */
    ADF_OP_FLUSH,       /* emit everything so far (a sync flush) */
    ADF_OP_FINISH       /* end the stream, write the trailer */
} adf_op_e;

typedef apr_status_t adf_sink_fn(void *baton, const char *data,
                                 apr_size_t len);

typedef struct adf_stream_t adf_stream_t;

typedef struct {
    adf_coding_e coding;
    int min_level, max_level;
    /* Set up the coder's state in s->state, sized for size_hint bytes of
     * input (-1 when unknown).  Returns APR_ENOMEM or APR_EGENERAL. */
    apr_status_t (*open)(adf_stream_t *s, int level, apr_off_t size_hint);
    apr_status_t (*write)(adf_stream_t *s, const char *data, apr_size_t len,
                          adf_op_e op);
    void (*free)(adf_stream_t *s);
    /* Add n bytes of padding to the stream's header (NULL: no header to
     * pad).  Called before the first write. */
    apr_status_t (*pad)(adf_stream_t *s, apr_size_t n);
} adf_codec_t;

struct adf_stream_t {
    const adf_codec_t *codec;
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

/* The codec for a coding, or NULL when this build lacks it. */
const adf_codec_t *adf_codec_get(adf_coding_e coding);

/* Open a stream; its state is freed by adf_stream_close or, failing
 * that, when pool p is cleared.  bufsize is the largest chunk the sink
 * will be handed (0: a default of 8000 bytes; at least 64). */
apr_status_t adf_stream_open(adf_stream_t **s, apr_pool_t *p,
                             adf_coding_e coding, int level,
                             apr_off_t size_hint, apr_size_t bufsize,
                             adf_sink_fn *sink, void *baton);

apr_status_t adf_stream_write(adf_stream_t *s, const char *data,
                              apr_size_t len, adf_op_e op);

/* Pad the header by n bytes (BREACH length hiding), before any write.
 * APR_ENOTIMPL for codings without a header field to pad (brotli). */
apr_status_t adf_stream_pad(adf_stream_t *s, apr_size_t n);

/* Release the coder's memory now rather than at pool cleanup. */
void adf_stream_close(adf_stream_t *s);

/* Hand n bytes of s->buf to the sink (for codec implementations). */
apr_status_t adf_stream_emit(adf_stream_t *s, apr_size_t n);

extern const adf_codec_t adf_codec_gzip;
#ifdef ADF_HAVE_BROTLI
extern const adf_codec_t adf_codec_brotli;
#endif

#endif /* ADF_CODEC_H */
