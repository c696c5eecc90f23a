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
    /* Refit the state, opened for an unknown length, to n bytes: the
     * whole input, known before the first write reached the backend (the
     * stream holds up to ADF_STAGE_MAX bytes back to learn it).  NULL: the
     * backend is not told, and nothing is held back for it. */
    apr_status_t (*fit)(adf_stream_t *s, apr_size_t n);
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
    const adf_dict_t *dict;     /* the coding's dictionary, if it needs one */
    int finished;
    /* Input held back while the length may still turn out (fit): */
    int staging;            /* still holding back */
    char *stage;
    apr_size_t staged, stage_cap;
};

/* A stream of unknown length holds back up to this much input, for a
 * backend with fit: if the body ends within it, its state is sized to the
 * body (a 3.6 KB streamed page then takes a 0.1-0.3 MB zstd state rather
 * than one fitted for any length). */
#define ADF_STAGE_MAX (64 * 1024)

/* ---- reuse of coder state (adf_codec_pool.c) ----
 * A backend whose state can be reset keeps it, when its stream ends, on
 * an idle list of its own, and its next stream takes it from there.  Per
 * list and process at most ADF_IDLE_MAX states and ADF_IDLE_BYTES bytes
 * are kept (the least recently used go first); more streams at once get
 * states of their own, freed when they end. */
#define ADF_IDLE_MAX 8
#define ADF_IDLE_BYTES (16 * 1024 * 1024)

typedef struct adf_idle_t adf_idle_t;
struct adf_idle_t {
    adf_idle_t *next;
    apr_uint32_t key;       /* the backend's: what the state is set up for */
    apr_size_t bytes;       /* what it holds */
    apr_time_t since;       /* idle since */
};

typedef struct adf_idle_list_t adf_idle_list_t;
struct adf_idle_list_t {
    void (*destroy)(adf_idle_t *e);
    /* the rest is the pool's (zero in a static definition) */
    adf_idle_t *head;
    int n;
    apr_size_t bytes;
    int linked;
    adf_idle_list_t *next_list;
};

/* An idle state set up for key, else (any) the most recently used one,
 * else NULL (the caller makes one). */
adf_idle_t *adf_idle_take(adf_idle_list_t *l, apr_uint32_t key, int any);
/* Keep e, reset by the caller, for a later stream; it may be destroyed
 * (by l->destroy) at once or later to stay within the caps. */
void adf_idle_put(adf_idle_list_t *l, adf_idle_t *e, apr_uint32_t key,
                  apr_size_t bytes);

/* What a backend keeps for the process's life (zstd's prepared
 * dictionaries) is freed by fn at its end (adf_codec_pool_exit, before the
 * idle blocks are drained); registered once, at its first use.  At most
 * ADF_POOL_AT_EXIT functions. */
#define ADF_POOL_AT_EXIT 4
void adf_codec_pool_at_exit(void (*fn)(void));

/* An allocator for the libraries that take one (zstd's ZSTD_customMem,
 * brotli's alloc_func and free_func; opaque unused): blocks of
 * ADF_MEM_MAP_MIN bytes or more are mapped outside malloc's arenas, and
 * up to ADF_MEM_IDLE_MAX of them (ADF_MEM_IDLE_BYTES) are kept when freed,
 * for a request of their size or up to a quarter less; the others are
 * unmapped. */
#define ADF_MEM_MAP_MIN (64 * 1024)
#define ADF_MEM_IDLE_MAX 32
#define ADF_MEM_IDLE_BYTES (16 * 1024 * 1024)
void *adf_mem_alloc(void *opaque, size_t n);
void adf_mem_free(void *opaque, void *p);

/* Hand n bytes to the sink, in chunks of at most s->bufsize. */
apr_status_t adf_stream_emit(adf_stream_t *s, const unsigned char *data,
                             apr_size_t n);

/* Loop a streaming encoder until it has taken all input (and, for a flush
 * or the end, given all output): each step fills s->buf and reports how
 * much it produced and whether it is done. */
typedef apr_status_t adf_step_fn(adf_stream_t *s, apr_size_t *produced,
                                 int *done);
apr_status_t adf_stream_pump(adf_stream_t *s, adf_step_fn *step);

extern const adf_backend_t adf_backend_zlib;
#ifdef ADF_HAVE_ISAL
extern const adf_backend_t adf_backend_isal;
#endif
#ifdef ADF_HAVE_LIBDEFLATE
extern const adf_backend_t adf_backend_libdeflate;
#endif
#ifdef ADF_HAVE_ZSTD
/* Codes against s->dict, as raw content, where there is one (dcz). */
extern const adf_backend_t adf_backend_zstd;
/* The largest window log a client must accept against a dictionary of
 * dict_len bytes: 2^w <= max(8 MB, 1.25 x dict_len). */
int adf_zstd_dict_wlog_max(apr_size_t dict_len);
#endif

#endif /* ADF_CODEC_IMPL_H */
