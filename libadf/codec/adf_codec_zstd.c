/* The zstd coding (RFC 8878; for HTTP, RFC 9659), through libzstd.  HTTP
 * decoders need not accept windows above 8 MB: levels stop at 19, whose
 * window is 8 MB at most (the "ultra" levels 20-22 need more); the unit
 * tests decode with an 8 MB limit. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_ZSTD
/* ZSTD_createCCtx_advanced and ZSTD_customMem: in libzstd since 1.0 and
 * exported by its shared library, declared with the experimental API. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    adf_idle_t idle;            /* first: the idle list's link */
    ZSTD_CCtx *cctx;
    apr_uint32_t key;           /* what it is set up for (zstd_key) */
    ZSTD_EndDirective mode;     /* of the write in progress */
    ZSTD_inBuffer in;
} zstd_t;

/* Contexts are reused (ZSTD_CCtx_reset): their workspace is kept, and
 * libzstd 1.5 carries its indexes on past the old entries rather than
 * clearing the tables while the workspace fits.  Their memory comes from
 * adf_mem, outside malloc's arenas. */
static const ZSTD_customMem zstd_mem = { adf_mem_alloc, adf_mem_free, NULL };

static void zstd_destroy(adf_idle_t *e)
{
    zstd_t *st = (zstd_t *)e;

    ZSTD_freeCCtx(st->cctx);
    free(st);
}

static adf_idle_list_t zstd_idle = { zstd_destroy };

/* A context's key: its level and window log, so that a stream takes one
 * set up alike where there is one (its workspace then fits as it is). */
static apr_uint32_t zstd_key(int level, int wlog)
{
    return (apr_uint32_t)level << 8 | (apr_uint32_t)wlog;
}

/* The window log that holds n bytes (10 to 27). */
static int wlog_for(apr_uint64_t n)
{
    int w = 10;

    while (w < 27 && ((apr_uint64_t)1 << w) < n) {
        w++;
    }
    return w;
}

/* A stream's window and match tables.  Without a pledged size libzstd
 * sizes them for unbounded input: at level 12 a 55 MB context whose pages
 * are faulted in for every response (35 ms of CPU for a 4 KB body,
 * measured).  The window is fitted to the length when it is known, and
 * capped at 512 KB (ADF_ZSTD_WLOG) when it is not; the hash and chain
 * tables, which the stronger strategies size far above the window, to the
 * window.  The levels below 5 use small tables of their own and keep
 * them.  The cap, measured on 14 pages and texts of 60-700 KB streamed at
 * levels 8 and 12: a 512 KB window (2.8 MB of context) costs 0.3 % more
 * bytes than 1 MB (4.9 MB), 256 KB (1.8 MB) 1.5-1.8 %, 128 KB 3.7-4.3 %;
 * bodies within the window lose nothing. */
#define ADF_ZSTD_WLOG 19

static int stream_wlog(int level, apr_off_t hint)
{
    int wlog = hint > 0 ? wlog_for((apr_uint64_t)hint) : ADF_ZSTD_WLOG;

    if (wlog > 23) {
        wlog = 23;      /* 8 MB: what HTTP decoders must accept */
    }
    if (level <= 2 && wlog > 19) {
        wlog = 19;      /* the fast levels' own window */
    }
    return wlog;
}

static int zstd_fit_params(ZSTD_CCtx *cctx, int level, int wlog)
{
    int err = 0;

    err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog));
    if (level >= 5) {
        err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog,
                                                   wlog));
        err |= ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog,
                                                   wlog - 1));
    }
    return err;
}

/* Against a dictionary (dcz, RFC 9842) every byte of it stays in reach
 * only while the input is within the window, so the window covers the
 * input (a body of unknown length: as much as the dictionary, which is
 * most often its previous version) up to what a client must accept:
 * max(8 MB, 1.25 x the dictionary). */
int adf_zstd_dict_wlog_max(apr_size_t dict_len)
{
    apr_uint64_t limit = (apr_uint64_t)dict_len + dict_len / 4;
    int w = 23;

    while (w < 30 && ((apr_uint64_t)1 << (w + 1)) <= limit) {
        w++;
    }
    return w;
}

static int dict_wlog(const adf_dict_t *dict, apr_off_t hint)
{
    int w = wlog_for(hint > 0 ? (apr_uint64_t)hint
                     : dict->len > 512 * 1024 ? dict->len : 512 * 1024);
    int max = adf_zstd_dict_wlog_max(dict->len);

    return w < max ? w : max;
}

/* Prepared dictionaries.  Loaded as a prefix, a dictionary is indexed
 * again for every stream: a 13 KB page against 110 KB cost 232 us at
 * level 3 and 14.9 ms at 12, against 95 us and 0.73 ms prepared once
 * (ZSTD_CDict; bench/dictionary).  A dictionary whose bytes live as long
 * as the process (adf_dict_t's stable: the configuration's) is prepared
 * once per level and kept, up to CDICT_BYTES in all; others, and any
 * beyond, are loaded as a prefix. */
#define CDICT_MAX 32
#define CDICT_BYTES (64 * 1024 * 1024)

static struct {
    const unsigned char *data;  /* the same bytes at the same place: a */
    apr_size_t len;             /* configuration read again in the same */
    unsigned char hash[ADF_DICT_HASH_LEN];  /* process may reuse the */
    int level;                  /* place for other bytes */
    ZSTD_CDict *cd;
} cdicts[CDICT_MAX];
static int ncdicts;
static apr_size_t cdict_bytes;
static pthread_mutex_t cdict_lock = PTHREAD_MUTEX_INITIALIZER;

/* At the process's end (adf_codec_pool_at_exit): the prepared
 * dictionaries freed, unless another thread, or the code the exit
 * interrupted, holds their lock. */
static void release_prepared(void)
{
    int i;

    if (pthread_mutex_trylock(&cdict_lock)) {
        return;
    }
    for (i = 0; i < ncdicts; i++) {
        ZSTD_freeCDict(cdicts[i].cd);
    }
    ncdicts = 0;
    cdict_bytes = 0;
    pthread_mutex_unlock(&cdict_lock);
}

static const ZSTD_CDict *prepared(const adf_dict_t *dict, int level)
{
    static int registered;
    ZSTD_CDict *cd = NULL;
    int i;

    pthread_mutex_lock(&cdict_lock);
    for (i = 0; i < ncdicts; i++) {
        if (cdicts[i].data == dict->data && cdicts[i].len == dict->len
            && cdicts[i].level == level
            && !memcmp(cdicts[i].hash, dict->hash, ADF_DICT_HASH_LEN)) {
            cd = cdicts[i].cd;
            break;
        }
    }
    if (!cd && ncdicts < CDICT_MAX && cdict_bytes < CDICT_BYTES
        && (cd = ZSTD_createCDict_advanced(
                dict->data, dict->len, ZSTD_dlm_byRef, ZSTD_dct_rawContent,
                ZSTD_getCParams(level, 0, dict->len), zstd_mem))) {
        cdicts[ncdicts].data = dict->data;
        cdicts[ncdicts].len = dict->len;
        memcpy(cdicts[ncdicts].hash, dict->hash, ADF_DICT_HASH_LEN);
        cdicts[ncdicts].level = level;
        cdicts[ncdicts++].cd = cd;
        cdict_bytes += ZSTD_sizeof_CDict(cd);
        if (!registered) {
            adf_codec_pool_at_exit(release_prepared);
            registered = 1;
        }
    }
    pthread_mutex_unlock(&cdict_lock);
    return cd;
}

/* The dictionary as raw content (a dictionary that starts with zstd's
 * dictionary magic is still content here), for this frame only. */
static int ref_dict(ZSTD_CCtx *cctx, const adf_dict_t *dict, int wlog,
                    int level)
{
    const ZSTD_CDict *cd = dict->stable ? prepared(dict, level) : NULL;

    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog))) {
        return 1;
    }
    return cd ? ZSTD_isError(ZSTD_CCtx_refCDict(cctx, cd))
              : ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(
                    cctx, dict->data, dict->len, ZSTD_dct_rawContent));
}

static apr_status_t zstd_open(adf_stream_t *s, apr_off_t hint)
{
    int whole = (s->flags & ADF_STREAM_WHOLE) && hint >= 0;
    int wlog = s->dict ? dict_wlog(s->dict, hint)
             : whole ? wlog_for((apr_uint64_t)hint)
             : stream_wlog(s->blevel, hint);
    zstd_t *st;

    if ((st = (zstd_t *)adf_idle_take(&zstd_idle, zstd_key(s->blevel, wlog),
                                      1))) {
        /* a new frame with new parameters; the workspace stays */
        if (ZSTD_isError(ZSTD_CCtx_reset(st->cctx,
                                         ZSTD_reset_session_and_parameters))) {
            zstd_destroy(&st->idle);
            st = NULL;
        }
    }
    if (!st) {
        if (!(st = calloc(1, sizeof(*st)))) {
            return APR_ENOMEM;
        }
        if (!(st->cctx = ZSTD_createCCtx_advanced(zstd_mem))) {
            free(st);
            return APR_ENOMEM;
        }
    }
    st->key = zstd_key(s->blevel, wlog);
    /* A size known for sure (the whole input is here) lets libzstd fit
     * its window and tables to it; a mere hint might be wrong, and libzstd
     * refuses more input than was pledged: then the stream is fitted. */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(st->cctx, ZSTD_c_compressionLevel,
                                            s->blevel))
        || (whole && ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(
                         st->cctx, (unsigned long long)hint)))
        || (s->dict ? ref_dict(st->cctx, s->dict, wlog, s->blevel)
            : !whole && zstd_fit_params(st->cctx, s->blevel, wlog))) {
        zstd_destroy(&st->idle);
        return APR_EGENERAL;
    }
    s->state = st;
    return APR_SUCCESS;
}

/* The whole length turned out before the first write: libzstd's own
 * parameters for that length, as for a whole body. */
static apr_status_t zstd_fit(adf_stream_t *s, apr_size_t n)
{
    zstd_t *st = s->state;

    if (ZSTD_isError(ZSTD_CCtx_reset(st->cctx, ZSTD_reset_parameters))
        || ZSTD_isError(ZSTD_CCtx_setParameter(st->cctx,
                                               ZSTD_c_compressionLevel,
                                               s->blevel))
        || ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(st->cctx,
                                                    (unsigned long long)n))
        || (s->dict && ref_dict(st->cctx, s->dict,
                                dict_wlog(s->dict, (apr_off_t)n),
                                s->blevel))) {
        return APR_EGENERAL;
    }
    st->key = zstd_key(s->blevel, s->dict ? dict_wlog(s->dict, (apr_off_t)n)
                                          : wlog_for(n));
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

/* The stream is over, finished or not: its context goes back idle,
 * without the frame in progress. */
static void zstd_free(adf_stream_t *s)
{
    zstd_t *st = s->state;

    if (ZSTD_isError(ZSTD_CCtx_reset(st->cctx, ZSTD_reset_session_only))) {
        zstd_destroy(&st->idle);
        return;
    }
    adf_idle_put(&zstd_idle, &st->idle, st->key, ZSTD_sizeof_CCtx(st->cctx));
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

const adf_backend_t adf_backend_zstd = {
    "zstd", zstd_prior, 1, 19,
    zstd_open, zstd_write, zstd_free, NULL, zstd_fit
};

static const adf_backend_t *zstd_pick(int level, apr_off_t hint, int flags,
                                      int *blevel)
{
    *blevel = level;
    return &adf_backend_zstd;
}

static const adf_codec_t zstd_codec = { zstd_pick };
#endif /* ADF_HAVE_ZSTD */

const adf_coding_t adf_coding_zstd = {
    .id = ADF_ZSTD, .token = "zstd", .ext = ".zst", .etag_suffix = "-ad-zstd",
    .level_word = "level",
    .min_level = 1, .max_level = 19,    /* libzstd's within an 8 MB window */
    .default_min = 1, .default_max = 12,        /* above 12 the cost climbs
                                                 * steeply for little gain */
    .strongest = 19,
    .rank = 2,
    .cache_rank = 3,
#ifdef ADF_HAVE_ZSTD
    .codec = &zstd_codec
#endif
};
