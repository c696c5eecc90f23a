/* For codec implementations only: the stream's fields, and the vtable of
 * a backend (one library's encoder).  A coding's descriptor picks the
 * backend for each stream; everything else sees adf_codec.h's opaque
 * stream. */
#ifndef ADF_CODEC_IMPL_H
#define ADF_CODEC_IMPL_H

#include "adf_codec.h"

typedef struct adf_backend_t adf_backend_t;

/* What a backend level costs and gives, measured (docs/benchmarks.md: a
 * 100 KB web page on this project's machine kind, CPU time); the
 * controller starts from these and learns the real ones. */
typedef struct {
    float cost;                 /* ns per input byte */
    float ratio;                /* output / input */
} adf_prior_t;

struct adf_backend_t {
    const char *name;
    const adf_prior_t *prior;   /* for levels prior_min.. */
    int prior_min, prior_max;
    /* Set up the coder's state in s->state for s->level (the backend's
     * own level, from the coding's pick), sized for size_hint bytes of
     * input (-1: unknown).  APR_ENOMEM or APR_EGENERAL on failure. */
    apr_status_t (*open)(adf_stream_t *s, apr_off_t size_hint);
    apr_status_t (*write)(adf_stream_t *s, const char *data, apr_size_t len,
                          adf_op_e op);
    void (*free)(adf_stream_t *s);
    /* Add n bytes of padding to the header (NULL: no header to pad).
     * Called before the first write. */
    apr_status_t (*pad)(adf_stream_t *s, apr_size_t n);
};

/* A coding's choice of backend for a stream: the level on the coding's
 * scale, the input's length if known and the ADF_STREAM_* flags; sets
 * *blevel, the backend's own level. */
struct adf_codec_t {
    const adf_backend_t *(*pick)(int level, apr_off_t size_hint, int flags,
                                 int *blevel);
};

struct adf_stream_t {
    const adf_coding_t *coding;
    const adf_backend_t *backend;
    void *state;
    apr_pool_t *pool;
    adf_sink_fn *sink;
    void *baton;
    unsigned char *buf;
    apr_size_t bufsize;
    apr_off_t bytes_in;
    apr_off_t bytes_out;
    int level;              /* on the coding's scale */
    int blevel;             /* the backend's own */
    int flags;
    int finished;
};

/* Hand n bytes to the sink, in chunks of at most s->bufsize. */
apr_status_t adf_stream_emit(adf_stream_t *s, const unsigned char *data,
                             apr_size_t n);

/* Loop a streaming encoder until it has taken all input (and, for a flush
 * or the end, given all output): each step fills s->buf and reports how
 * much it produced and whether it is done. */
typedef apr_status_t adf_step_fn(adf_stream_t *s, apr_size_t *produced,
                                 int *done);
apr_status_t adf_stream_pump(adf_stream_t *s, adf_step_fn *step);

extern const adf_coding_t adf_coding_gzip;
extern const adf_backend_t adf_backend_zlib;
#ifdef ADF_HAVE_ISAL
extern const adf_backend_t adf_backend_isal;
#endif
#ifdef ADF_HAVE_LIBDEFLATE
extern const adf_backend_t adf_backend_libdeflate;
#endif
#ifdef ADF_HAVE_BROTLI
extern const adf_coding_t adf_coding_brotli;
#endif
#ifdef ADF_HAVE_ZSTD
extern const adf_coding_t adf_coding_zstd;
#endif

#endif /* ADF_CODEC_IMPL_H */
