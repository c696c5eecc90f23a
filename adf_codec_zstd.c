/* The zstd coding (RFC 8878; for HTTP, RFC 9659), through libzstd.  HTTP
 * decoders need not accept windows above 8 MB: levels stop at 19, whose
 * window is 8 MB at most (the "ultra" levels 20-22 need more); the unit
 * tests decode with an 8 MB limit. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_ZSTD
#include <zstd.h>

typedef struct {
    ZSTD_CCtx *cctx;
    ZSTD_EndDirective mode;     /* of the write in progress */
    ZSTD_inBuffer in;
} zstd_t;

/* A stream's window and match tables.  Without a pledged size libzstd
 * sizes them for unbounded input: at level 12 a 55 MB context whose pages
 * are faulted in for every response (35 ms of CPU for a 4 KB body,
 * measured).  The window is fitted to the length when it is known, 1 MB
 * when it is not; the hash and chain tables, which the stronger
 * strategies size far above the window, to the window.  The levels below
 * 5 use small tables of their own and keep them. */
static int zstd_fit(ZSTD_CCtx *cctx, int level, apr_off_t hint)
{
    int wlog = 20, err = 0;

    if (hint > 0) {
        for (wlog = 10; wlog < 23 && ((apr_off_t)1 << wlog) < hint; wlog++) {
        }
    }
    if (level <= 2 && wlog > 19) {
        wlog = 19;      /* the fast levels' own window */
    }
    err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog));
    if (level >= 5) {
        err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog,
                                                   wlog));
        err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog,
                                                   wlog - 1));
    }
    return err;
}

static apr_status_t zstd_open(adf_stream_t *s, apr_off_t hint)
{
    zstd_t *st = apr_pcalloc(s->pool, sizeof(*st));
    int whole = (s->flags & ADF_STREAM_WHOLE) && hint >= 0;

    if (!(st->cctx = ZSTD_createCCtx())) {
        return APR_ENOMEM;
    }
    /* A size known for sure (the whole input is here) lets libzstd fit
     * its window and tables to it; a mere hint might be wrong, and libzstd
     * refuses more input than was pledged: then the stream is fitted. */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(st->cctx, ZSTD_c_compressionLevel,
                                            s->blevel))
        || (whole && ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(
                         st->cctx, (unsigned long long)hint)))
        || (!whole && zstd_fit(st->cctx, s->blevel, hint))) {
        ZSTD_freeCCtx(st->cctx);
        return APR_EGENERAL;
    }
    s->state = st;
    return APR_SUCCESS;
}

static apr_status_t zstd_step(adf_stream_t *s, apr_size_t *produced,
                              int *done)
{
    zstd_t *st = s->state;
    ZSTD_outBuffer out = { s->buf, s->bufsize, 0 };
    size_t left = ZSTD_compressStream2(st->cctx, &out, &st->in, st->mode);

    if (ZSTD_isError(left)) {
        return APR_EGENERAL;
    }
    *produced = out.pos;
    /* For a flush or the end, 0 left means all of it is out; otherwise
     * all input taken is enough. */
    *done = st->mode == ZSTD_e_continue ? st->in.pos == st->in.size
                                        : left == 0;
    return APR_SUCCESS;
}

static apr_status_t zstd_write(adf_stream_t *s, const char *data,
                               apr_size_t len, adf_op_e op)
{
    zstd_t *st = s->state;

    st->mode = op == ADF_OP_FINISH ? ZSTD_e_end
             : op == ADF_OP_FLUSH ? ZSTD_e_flush : ZSTD_e_continue;
    st->in.src = data;
    st->in.size = len;
    st->in.pos = 0;
    return adf_stream_pump(s, zstd_step);
}

static void zstd_free(adf_stream_t *s)
{
    ZSTD_freeCCtx(((zstd_t *)s->state)->cctx);
}

static const adf_prior_t zstd_prior[] = {
    { 0.88f, 0.1501f }, /* 1 */
    { 0.96f, 0.1502f }, /* 2 */
    { 1.01f, 0.1445f }, /* 3 */
    { 1.25f, 0.1447f }, /* 4 */
    { 3.32f, 0.1342f }, /* 5 */
    { 4.92f, 0.1308f }, /* 6 */
    { 6.13f, 0.1299f }, /* 7 */
    { 6.89f, 0.1282f }, /* 8 */
    { 8.2f, 0.1272f }, /* 9 */
    { 9.87f, 0.1263f }, /* 10 */
    { 28.79f, 0.1262f }, /* 11 */
    { 36.98f, 0.1256f }, /* 12 */
    { 59.39f, 0.1270f }, /* 13 */
    { 72.86f, 0.1246f }, /* 14 */
    { 90.99f, 0.1217f }, /* 15 */
    { 119.6f, 0.1223f }, /* 16 */
    { 194.5f, 0.1213f }, /* 17 */
    { 252.2f, 0.1213f }, /* 18 */
    { 402.5f, 0.1211f }, /* 19 */
};

static const adf_backend_t zstd_backend = {
    "zstd", zstd_prior, 1, 19,
    zstd_open, zstd_write, zstd_free, NULL
};

static const adf_backend_t *zstd_pick(int level, apr_off_t hint, int flags,
                                      int *blevel)
{
    *blevel = level;
    return &zstd_backend;
}

static const adf_codec_t zstd_codec = { zstd_pick };

const adf_coding_t adf_coding_zstd = {
    ADF_ZSTD, "zstd", NULL, ".zst", "-ad-zstd", "level",
    1, 19,      /* libzstd's levels within an 8 MB window */
    1, 12,      /* above 12 the cost climbs steeply for little gain */
    19,         /* siblings and the cache */
    &zstd_codec
};
#endif /* ADF_HAVE_ZSTD */
