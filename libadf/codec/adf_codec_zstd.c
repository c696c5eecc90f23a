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
#include <time.h>

typedef struct {
    adf_idle_t idle;            /* first: the idle list's link */
    ZSTD_CCtx *cctx;
    apr_uint32_t key;           /* what it is set up for (zstd_key) */
    ZSTD_EndDirective mode;     /* of the write in progress */
    ZSTD_inBuffer in;
    adf_dict_prep_t *held;      /* a stable dictionary's, taken for the
                                 * stream */
} zstd_t;

/* Contexts are reused (ZSTD_CCtx_reset): their workspace is kept, and
 * libzstd 1.5 carries its indexes on past the old entries rather than
 * clearing the tables while the workspace fits.  Their memory comes from
 * adf_mem, outside malloc's arenas. */
static const ZSTD_customMem zstd_mem = { adf_mem_alloc, adf_mem_free, NULL };

static void zstd_destroy(adf_idle_t *e)
{
    zstd_t *st = (zstd_t *)e;

    adf_dict_prep_put(st->held);
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

/* Prepared dictionaries (adf_codec.h).  Loaded as a prefix, a dictionary
 * is indexed again for every stream: a 13 KB page against 110 KB cost
 * 232 us at level 3 and 14.9 ms at 12, against 95 us and 0.73 ms
 * prepared once (ZSTD_CDict; bench/dictionary). */
struct adf_dict_prep_t {
    unsigned char hash[ADF_DICT_HASH_LEN];
    apr_size_t len;
    int level;
    ZSTD_CDict *cd;
    void *owned;                /* the bytes, where the CDict holds them */
    apr_size_t bytes;           /* the CDict's and the bytes' */
    int refs;                   /* holders, the table's one included */
    apr_uint64_t used;          /* the table's clock at its last get */
};

#define PREP_MAX 32
static adf_dict_prep_t *preps[PREP_MAX];
static int npreps;
static apr_size_t prep_bytes;
static apr_uint64_t prep_clock;
/* The cost learned, per level: measured CPU / what prep_ns_per_byte
 * says, smoothed (1: none measured yet). */
static double prep_scale[ADF_MAX_LEVEL + 1];
static pthread_mutex_t prep_lock = PTHREAD_MUTEX_INITIALIZER;

/* CPU per byte of dictionary to prepare it at each level, ns: 16 MB of
 * text (C headers and Perl modules) on this project's machine, each
 * level no less than the one below (16 measured 156, 11 13.8); a
 * megabyte costs the same per byte to level 12 and up to half of it
 * above.  Level 13 and up take libzstd's binary trees. */
static const double prep_ns_per_byte[20] = {
    0, 1.3, 1.7, 3.1, 3.2, 4.1, 4.3, 4.3, 4.9, 8.4, 13.9,
    13.9, 18.6, 143, 191, 199, 199, 235, 236, 285
};

static void prep_free(adf_dict_prep_t *p)
{
    ZSTD_freeCDict(p->cd);
    free(p->owned);
    free(p);
}

static void unref(adf_dict_prep_t *p)     /* under prep_lock */
{
    if (--p->refs == 0) {
        prep_free(p);
    }
}

/* Out of the table (under prep_lock): freed once no stream holds it. */
static void evict_at(int i)
{
    adf_dict_prep_t *p = preps[i];

    prep_bytes -= p->bytes;
    preps[i] = preps[--npreps];
    unref(p);
}

/* At the process's end (adf_codec_pool_at_exit): the prepared
 * dictionaries freed, unless another thread, or the code the exit
 * interrupted, holds their lock. */
static void release_prepared(void)
{
    int i;

    if (pthread_mutex_trylock(&prep_lock)) {
        return;
    }
    for (i = npreps - 1; i >= 0; i--) {
        evict_at(i);
    }
    pthread_mutex_unlock(&prep_lock);
}

adf_dict_prep_t *adf_dict_prep_get(const unsigned char *hash, apr_size_t len,
                                   int level)
{
    adf_dict_prep_t *p = NULL;
    int i;

    pthread_mutex_lock(&prep_lock);
    for (i = 0; i < npreps; i++) {
        if (preps[i]->len == len && (!level || preps[i]->level == level)
            && !memcmp(preps[i]->hash, hash, ADF_DICT_HASH_LEN)
            && (!p || preps[i]->used > p->used)) {
            p = preps[i];
        }
    }
    if (p) {
        p->refs++;
        p->used = ++prep_clock;
    }
    pthread_mutex_unlock(&prep_lock);
    return p;
}

static apr_uint64_t cpu_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (apr_uint64_t)t.tv_sec * 1000000000u + (apr_uint64_t)t.tv_nsec;
}

adf_dict_prep_t *adf_dict_prep_make(const adf_dict_t *dict, int level,
                                    int owned)
{
    adf_dict_prep_t *p, *had = NULL;
    apr_uint64_t t0;
    double took, scale;
    int i;

    if (level < 1 || level > 19 || !dict->data
        || !(p = calloc(1, sizeof(*p)))) {
        if (owned) {
            free((void *)dict->data);
        }
        return NULL;
    }
    /* outside the lock: a large dictionary takes its time */
    t0 = cpu_ns();
    p->cd = ZSTD_createCDict_advanced(dict->data, dict->len, ZSTD_dlm_byRef,
                                      ZSTD_dct_rawContent,
                                      ZSTD_getCParams(level, 0, dict->len),
                                      zstd_mem);
    took = (double)(cpu_ns() - t0);
    if (!p->cd) {
        free(p);
        if (owned) {
            free((void *)dict->data);
        }
        return NULL;
    }
    memcpy(p->hash, dict->hash, ADF_DICT_HASH_LEN);
    p->len = dict->len;
    p->level = level;
    p->owned = owned ? (void *)dict->data : NULL;
    p->bytes = ZSTD_sizeof_CDict(p->cd) + (owned ? dict->len : 0);
    p->refs = 1;

    pthread_mutex_lock(&prep_lock);
    if (dict->len >= 64 * 1024) {
        /* (smaller ones are timed mostly by libzstd's set-up) */
        scale = took / (prep_ns_per_byte[level] * (double)dict->len);
        prep_scale[level] = prep_scale[level] > 0
                            ? 0.7 * prep_scale[level] + 0.3 * scale : scale;
    }
    for (i = 0; i < npreps; i++) {
        if (preps[i]->len == p->len && preps[i]->level == level
            && !memcmp(preps[i]->hash, p->hash, ADF_DICT_HASH_LEN)) {
            had = preps[i];     /* another thread's, made meanwhile */
            break;
        }
    }
    if (had) {
        had->refs++;
        had->used = ++prep_clock;
    }
    else {
        /* room: the least recently used ones no stream holds go */
        while (npreps && (npreps == PREP_MAX
                          || prep_bytes + p->bytes > ADF_DICT_PREP_BYTES)) {
            int lru = -1;

            for (i = 0; i < npreps; i++) {
                if (preps[i]->refs == 1
                    && (lru < 0 || preps[i]->used < preps[lru]->used)) {
                    lru = i;
                }
            }
            if (lru < 0) {
                break;
            }
            evict_at(lru);
        }
        if (npreps < PREP_MAX
            && prep_bytes + p->bytes <= ADF_DICT_PREP_BYTES) {
            static int registered;

            if (!registered) {
                adf_codec_pool_at_exit(release_prepared);
                registered = 1;
            }
            /* kept: the table's reference and the caller's */
            p->refs++;
            p->used = ++prep_clock;
            prep_bytes += p->bytes;
            preps[npreps++] = p;
        }
        /* else the caller's alone, freed when it is let go */
    }
    pthread_mutex_unlock(&prep_lock);
    if (had) {
        prep_free(p);
        return had;
    }
    return p;
}

void adf_dict_prep_put(adf_dict_prep_t *p)
{
    if (p) {
        pthread_mutex_lock(&prep_lock);
        unref(p);
        pthread_mutex_unlock(&prep_lock);
    }
}

int adf_dict_prep_level(const adf_dict_prep_t *p)
{
    return p->level;
}

apr_size_t adf_dict_prep_tables(const adf_dict_prep_t *p)
{
    return ZSTD_sizeof_CDict(p->cd);
}

void adf_dict_prep_flush(void)
{
    int i;

    pthread_mutex_lock(&prep_lock);
    for (i = npreps - 1; i >= 0; i--) {
        evict_at(i);    /* one a stream holds is freed when it is done */
    }
    pthread_mutex_unlock(&prep_lock);
}

double adf_dict_prep_cost(int level, apr_size_t len)
{
    double scale;

    if (level < 1 || level > 19) {
        return 0;
    }
    pthread_mutex_lock(&prep_lock);
    scale = prep_scale[level] > 0 ? prep_scale[level] : 1;
    pthread_mutex_unlock(&prep_lock);
    return prep_ns_per_byte[level] * (double)len * scale;
}

int adf_dict_level_max(apr_size_t len)
{
    int level = 19;

    while (level > 0
           && prep_ns_per_byte[level] * (double)len > ADF_DICT_PREP_MAX_NS) {
        level--;
    }
    return level;
}

/* The dictionary as raw content (a dictionary that starts with zstd's
 * dictionary magic is still content here), for this frame only: its
 * prepared form where the caller gave one or the stream took one (a
 * stable dictionary is prepared once per level and kept), else as a
 * prefix. */
static int ref_dict(zstd_t *st, const adf_dict_t *dict, int wlog, int level)
{
    const adf_dict_prep_t *p = dict->prep;

    if (!p && dict->stable && !st->held) {
        if (!(st->held = adf_dict_prep_get(dict->hash, dict->len, level))) {
            st->held = adf_dict_prep_make(dict, level, 0);
        }
    }
    p = p ? p : st->held;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(st->cctx, ZSTD_c_windowLog,
                                            wlog))) {
        return 1;
    }
    if (p) {
        return ZSTD_isError(ZSTD_CCtx_refCDict(st->cctx, p->cd));
    }
    return !dict->data
           || ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(
                  st->cctx, dict->data, dict->len, ZSTD_dct_rawContent));
}

static apr_status_t zstd_open(adf_stream_t *s, apr_off_t hint)
{
    int whole = (s->flags & ADF_STREAM_WHOLE) && hint >= 0;
    int wlog = s->dict ? dict_wlog(s->dict, hint)
             : whole ? wlog_for((apr_uint64_t)hint)
             : stream_wlog(s->blevel, hint);
    zstd_t *st;

    if (s->dict && s->dict->prep) {
        /* a prepared dictionary codes at its own level (libzstd takes the
         * CDict's), which the stream then reports */
        s->level = s->blevel = s->dict->prep->level;
    }
    if ((st = (zstd_t *)adf_idle_take(&zstd_idle, zstd_key(s->blevel, wlog),
                                      1))) {
        /* a new frame with new parameters; the workspace stays */
        if (ZSTD_isError(ZSTD_CCtx_reset(st->cctx,
                                         ZSTD_reset_session_and_parameters))) {
            zstd_destroy(&st->idle);
            st = NULL;
        }
    }
    if (st) {
        st->held = NULL;
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
        || (s->dict ? ref_dict(st, s->dict, wlog, s->blevel)
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
        || (s->dict && ref_dict(st, s->dict,
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

    /* against a dictionary, the context lets go of it (and its prepared
     * form, which may be freed now) */
    if (ZSTD_isError(ZSTD_CCtx_reset(st->cctx, s->dict
                                     ? ZSTD_reset_session_and_parameters
                                     : ZSTD_reset_session_only))) {
        zstd_destroy(&st->idle);
        return;
    }
    adf_dict_prep_put(st->held);
    st->held = NULL;
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
#else
#include <stdlib.h>

/* Without libzstd there is no dcz: nothing is ever prepared. */
adf_dict_prep_t *adf_dict_prep_get(const unsigned char *hash, apr_size_t len,
                                   int level)
{
    return NULL;
}

adf_dict_prep_t *adf_dict_prep_make(const adf_dict_t *dict, int level,
                                    int owned)
{
    if (owned) {
        free((void *)dict->data);
    }
    return NULL;
}

void adf_dict_prep_put(adf_dict_prep_t *p)
{
}

int adf_dict_prep_level(const adf_dict_prep_t *p)
{
    return 0;
}

apr_size_t adf_dict_prep_tables(const adf_dict_prep_t *p)
{
    return 0;
}

void adf_dict_prep_flush(void)
{
}

double adf_dict_prep_cost(int level, apr_size_t len)
{
    return 0;
}

int adf_dict_level_max(apr_size_t len)
{
    return 0;
}
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
