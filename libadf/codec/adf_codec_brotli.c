/* The br coding, through libbrotlienc. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_BROTLI
#include <brotli/encode.h>

typedef struct {
    BrotliEncoderState *enc;
    BrotliEncoderOperation op;  /* of the write in progress */
    const uint8_t *next_in;
    size_t avail_in;
} brotli_t;

/* brotli 1.0.9 has no reset for an encoder, so one is made per stream;
 * what makes it large (the ring buffer, the hasher's tables) comes from
 * adf_mem, mapped outside malloc's arenas and kept idle for the next
 * stream, whose blocks have the same sizes when its parameters do.
 *
 * The window: fitted to the length when it is known (by the filter, or
 * because the body ended within what the stream held back: brotli_fit),
 * and capped at 512 KB (ADF_BROTLI_LGWIN) rather than brotli's 4 MB when
 * it is not.  The cap, measured on 14 pages and texts of 60-700 KB
 * streamed at qualities 4-6: at most 0.05 % more bytes than 1 MB or 4 MB
 * (256 KB: 0.4-0.7 %, 128 KB: 1.4-2.1 %); the ring buffer for 4 MB is
 * 8 MB of mapping. */
#define ADF_BROTLI_LGWIN 19

static int fitted_lgwin(apr_off_t hint)
{
    int lgwin = hint >= 0 ? BROTLI_DEFAULT_WINDOW : ADF_BROTLI_LGWIN;

    /* A window no larger than the response saves memory and set-up. */
    if (hint >= 0) {
        while (lgwin > BROTLI_MIN_WINDOW_BITS
               && hint <= ((apr_off_t)1 << (lgwin - 1))) {
            lgwin--;
        }
    }
    return lgwin;
}

static void set_size(BrotliEncoderState *enc, apr_off_t hint)
{
    if (hint > 0 && hint < (apr_off_t)1 << 30) {
        BrotliEncoderSetParameter(enc, BROTLI_PARAM_SIZE_HINT,
                                  (uint32_t)hint);
    }
    BrotliEncoderSetParameter(enc, BROTLI_PARAM_LGWIN,
                              (uint32_t)fitted_lgwin(hint));
}

static apr_status_t brotli_open(adf_stream_t *s, apr_off_t hint)
{
    brotli_t *st = apr_pcalloc(s->pool, sizeof(*st));

    if (!(st->enc = BrotliEncoderCreateInstance(adf_mem_alloc, adf_mem_free,
                                                NULL))) {
        return APR_ENOMEM;
    }
    BrotliEncoderSetParameter(st->enc, BROTLI_PARAM_QUALITY,
                              (uint32_t)s->blevel);
    set_size(st->enc, hint);
    s->state = st;
    return APR_SUCCESS;
}

/* The whole length turned out before the first write. */
static apr_status_t brotli_fit(adf_stream_t *s, apr_size_t n)
{
    set_size(((brotli_t *)s->state)->enc, (apr_off_t)n);
    return APR_SUCCESS;
}

static apr_status_t brotli_step(adf_stream_t *s, apr_size_t *produced,
                                int *done)
{
    brotli_t *st = s->state;
    uint8_t *next_out = s->buf;
    size_t avail_out = s->bufsize;

    if (!BrotliEncoderCompressStream(st->enc, st->op, &st->avail_in,
                                     &st->next_in, &avail_out, &next_out,
                                     NULL)) {
        return APR_EGENERAL;
    }
    *produced = s->bufsize - avail_out;
    *done = st->avail_in == 0 && !BrotliEncoderHasMoreOutput(st->enc)
            && (st->op != BROTLI_OPERATION_FINISH
                || BrotliEncoderIsFinished(st->enc));
    return APR_SUCCESS;
}

static apr_status_t brotli_write(adf_stream_t *s, const char *data,
                                 apr_size_t len, adf_op_e op)
{
    brotli_t *st = s->state;

    st->op = op == ADF_OP_FINISH ? BROTLI_OPERATION_FINISH
           : op == ADF_OP_FLUSH ? BROTLI_OPERATION_FLUSH
           : BROTLI_OPERATION_PROCESS;
    st->next_in = (const uint8_t *)data;
    st->avail_in = len;
    return adf_stream_pump(s, brotli_step);
}

static void brotli_free(adf_stream_t *s)
{
    BrotliEncoderDestroyInstance(((brotli_t *)s->state)->enc);
}

static const adf_prior_t brotli_prior[] = {
    { 0.76f, 0.1639f }, /* 0 */
    { 1.23f, 0.1553f }, /* 1 */
    { 2.62f, 0.1440f }, /* 2 */
    { 3.4f, 0.1388f }, /* 3 */
    { 6.01f, 0.1328f }, /* 4 */
    { 8.84f, 0.1246f }, /* 5 */
    { 9.57f, 0.1231f }, /* 6 */
    { 11.78f, 0.1216f }, /* 7 */
    { 13.07f, 0.1212f }, /* 8 */
    { 706.1f, 0.1208f }, /* 9 */
    { 284.2f, 0.1136f }, /* 10 */
    { 875.5f, 0.1117f }, /* 11 */
};

static const adf_backend_t brotli_backend = {
    "brotli", brotli_prior, 0, 11,
    brotli_open, brotli_write, brotli_free, NULL, brotli_fit
};

static const adf_backend_t *brotli_pick(int level, apr_off_t hint, int flags,
                                        int *blevel)
{
    *blevel = level;
    return &brotli_backend;
}

static const adf_codec_t brotli_codec = { brotli_pick };
#endif /* ADF_HAVE_BROTLI */

const adf_coding_t adf_coding_brotli = {
    .id = ADF_BR, .token = "br", .ext = ".br", .etag_suffix = "-ad-br",
    .level_word = "quality",
    .min_level = 0, .max_level = 11,            /* libbrotlienc's qualities */
    .default_min = 1, .default_max = 6,         /* above 6 the cost climbs
                                                 * steeply for little gain */
    .strongest = 11,
    .rank = 1,          /* the smallest output at a given CPU */
    .cache_rank = 1,    /* what most clients take first */
#ifdef ADF_HAVE_BROTLI
    .codec = &brotli_codec
#endif
};
