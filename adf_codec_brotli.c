/* brotli through libbrotlienc. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_BROTLI
#include <brotli/encode.h>

static apr_status_t brotli_open(adf_stream_t *s, int level, apr_off_t hint)
{
    BrotliEncoderState *st = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    int lgwin = BROTLI_DEFAULT_WINDOW;

    if (!st) {
        return APR_ENOMEM;
    }
    /* A window no larger than the response saves memory and set-up. */
    if (hint > 0) {
        while (lgwin > BROTLI_MIN_WINDOW_BITS
               && hint <= ((apr_off_t)1 << (lgwin - 1))) {
            lgwin--;
        }
        if (hint < (apr_off_t)1 << 30) {
            BrotliEncoderSetParameter(st, BROTLI_PARAM_SIZE_HINT,
                                      (uint32_t)hint);
        }
    }
    BrotliEncoderSetParameter(st, BROTLI_PARAM_QUALITY, (uint32_t)level);
    BrotliEncoderSetParameter(st, BROTLI_PARAM_LGWIN, (uint32_t)lgwin);
    s->state = st;
    return APR_SUCCESS;
}

static apr_status_t brotli_write(adf_stream_t *s, const char *data,
                                 apr_size_t len, adf_op_e op)
{
    BrotliEncoderState *st = s->state;
    BrotliEncoderOperation bop = op == ADF_OP_FINISH ? BROTLI_OPERATION_FINISH
                               : op == ADF_OP_FLUSH ? BROTLI_OPERATION_FLUSH
                               : BROTLI_OPERATION_PROCESS;
    const uint8_t *next_in = (const uint8_t *)data;
    size_t avail_in = len;
    apr_status_t rv;

    for (;;) {
        uint8_t *next_out = s->buf;
        size_t avail_out = s->bufsize;

        if (!BrotliEncoderCompressStream(st, bop, &avail_in, &next_in,
                                         &avail_out, &next_out, NULL)) {
            return APR_EGENERAL;
        }
        rv = adf_stream_emit(s, s->bufsize - avail_out);
        if (rv != APR_SUCCESS) {
            return rv;
        }
        if (avail_in == 0 && !BrotliEncoderHasMoreOutput(st)
            && (op != ADF_OP_FINISH || BrotliEncoderIsFinished(st))) {
            break;
        }
    }
    return APR_SUCCESS;
}

static void brotli_free(adf_stream_t *s)
{
    BrotliEncoderDestroyInstance(s->state);
}

static const adf_codec_t brotli_codec = {
    brotli_open, brotli_write, brotli_free, NULL
};

const adf_coding_t adf_coding_brotli = {
    ADF_BR, "br", NULL, ".br", "-ad-br", "quality",
    0, 11,      /* libbrotlienc's qualities */
    1, 6,       /* above 6 the cost climbs steeply for little gain */
    11,         /* siblings and the cache */
    &brotli_codec
};
#endif /* ADF_HAVE_BROTLI */
