/* Streams: compress with a coding at a level, handing finished output to
 * a sink in chunks of at most the buffer size given at open; the caller
 * decides what a chunk becomes (a bucket, a file write, a test buffer).
 * The stream is opaque; codecs implement adf_codec_impl.h.  Pure.
 */
#ifndef ADF_CODEC_H
#define ADF_CODEC_H

#include <apr_pools.h>
#include <apr_time.h>
#include "adf_coding.h"

typedef enum {
    ADF_OP_WRITE,       /* compress, emit what is ready */
    ADF_OP_FLUSH,       /* emit everything so far (a sync flush) */
    ADF_OP_FINISH       /* end the stream, write the trailer */
} adf_op_e;

typedef apr_status_t adf_sink_fn(void *baton, const char *data,
                                 apr_size_t len);

typedef struct adf_stream_t adf_stream_t;

/* Bodies up to this size may be given whole (ADF_STREAM_WHOLE): the
 * one-shot encoders (libdeflate) need all of the input and an output
 * buffer of its size at once, so larger bodies stream in small pieces
 * (three concurrent 15 MB responses held 63 MB more in one child when
 * they went whole). */
#define ADF_WHOLE_MAX (1024 * 1024)

/* Flags for adf_stream_open. */
#define ADF_STREAM_WHOLE 1  /* the whole input comes in one FINISH write */
#define ADF_STREAM_PAD   2  /* adf_stream_pad will be called */
/* At the coding's strongest level, the strongest its backend has, where
 * one goes beyond the coding's scale (libdeflate's 12 for gzip 9, with
 * ADF_STREAM_WHOLE): for output made once and kept (the cache). */
#define ADF_STREAM_BEST  4

/* A dictionary a client holds (RFC 9842): its bytes and their SHA-256,
 * which names it on the wire.  The bytes must outlive the stream. */
#define ADF_DICT_HASH_LEN 32
/* The largest dictionary: a client keeps it, and decoding against it
 * takes a window of up to 1.25 times its size. */
#define ADF_DICT_MAX (16 * 1024 * 1024)
/* A dictionary indexed for one level (libzstd's ZSTD_CDict), shared by
 * every stream of the process that codes against it: see
 * adf_dict_prep_get below. */
typedef struct adf_dict_prep_t adf_dict_prep_t;

typedef struct {
    const unsigned char *data;  /* NULL where prep alone is given */
    apr_size_t len;
    unsigned char hash[ADF_DICT_HASH_LEN];
    int stable;         /* the bytes live, unchanged, as long as the
                         * process: a coder may keep a prepared form */
    adf_dict_prep_t *prep;      /* prepared already (the caller holds it
                                 * until the stream is closed): the stream
                                 * codes against it, at its level */
} adf_dict_t;

/* ---- prepared dictionaries -------------------------------------------- *
 * Indexing a dictionary costs about what coding it would (per byte of
 * it: 1.3 ns at level 1, 14 at 10, 140 at 13, 285 at 19 on this
 * project's machine, 16 MB of text), and loading it as a prefix does it
 * again for every response: a 2 KB body against a 16 MB dictionary
 * costs 20 ms at level 1 that way, 6 us prepared.  So a dictionary is
 * prepared once per process and level and kept, found again by its
 * SHA-256 (the bytes it stands for: any copy of them is the same
 * dictionary), in a table of ADF_DICT_PREP_BYTES at most (LRU; one in
 * use is never freed).  Preparing holds no lock: two threads that want
 * the same one at once may both prepare it, and the second one's is
 * dropped. */
#define ADF_DICT_PREP_BYTES (64 * 1024 * 1024)

/* The prepared form of the dictionary whose SHA-256 is hash, len bytes,
 * at level (0: at whichever level it was prepared, the latest used),
 * held for the caller: NULL when there is none.  adf_dict_prep_put lets
 * it go. */
adf_dict_prep_t *adf_dict_prep_get(const unsigned char *hash, apr_size_t len,
                                   int level);

/* Prepare dict (its data) at level and keep it, held for the caller.
 * owned: dict's bytes are malloc'ed and the prepared form takes them
 * (freed with it), else they must outlive it (a stable dictionary).
 * NULL when it cannot be made (owned bytes are freed then too).  Its
 * CPU time teaches adf_dict_prep_cost. */
adf_dict_prep_t *adf_dict_prep_make(const adf_dict_t *dict, int level,
                                    int owned);
void adf_dict_prep_put(adf_dict_prep_t *p);
int adf_dict_prep_level(const adf_dict_prep_t *p);
/* The bytes of its tables (what a stream that copies them holds). */
apr_size_t adf_dict_prep_tables(const adf_dict_prep_t *p);

/* The CPU preparing len bytes at level would take, in ns: the measured
 * cost per byte (above), scaled by what this process's own preparations
 * took. */
double adf_dict_prep_cost(int level, apr_size_t len);

/* Keep preparing a dictionary under ADF_DICT_PREP_MAX_NS of CPU (by the
 * measured cost alone): the strongest level a dictionary of len bytes
 * may be used at; 0 when not even level 1 fits (never, within
 * ADF_DICT_MAX). */
#define ADF_DICT_PREP_MAX_NS 200e6
int adf_dict_level_max(apr_size_t len);

/* Free every prepared dictionary no stream holds (a configuration read
 * again: its dictionaries' bytes go with the old one). */
void adf_dict_prep_flush(void);

/* What a stream is opened with. */
typedef struct {
    const adf_coding_t *coding; /* adf_coding(): NULL if the build lacks it */
    int level;                  /* on the coding's scale */
    apr_off_t size_hint;        /* the input's length; -1: unknown */
    int flags;                  /* ADF_STREAM_* */
    apr_size_t bufsize;         /* the largest chunk the sink is handed (0:
                                 * 8000 bytes; at least 64) */
    const adf_dict_t *dict;     /* for a coding that needs_dict */
} adf_stream_opts_t;

/* Open a stream; its state is freed by adf_stream_close or, failing
 * that, when pool p is cleared.  With ADF_STREAM_WHOLE size_hint must be
 * exact and the coding may use an encoder that needs the whole input at
 * once.  APR_ENOTIMPL for a coding this build lacks, APR_EINVAL for a
 * level outside its range or a dictionary missing or not wanted. */
apr_status_t adf_stream_open(adf_stream_t **s, apr_pool_t *p,
                             const adf_stream_opts_t *o, adf_sink_fn *sink,
                             void *baton);

apr_status_t adf_stream_write(adf_stream_t *s, const char *data,
                              apr_size_t len, adf_op_e op);

/* Pad the header by n bytes (BREACH length hiding), before any write.
 * APR_ENOTIMPL for codings without a header field to pad (brotli). */
apr_status_t adf_stream_pad(adf_stream_t *s, apr_size_t n);

/* Release the coder's memory now rather than at pool cleanup. */
void adf_stream_close(adf_stream_t *s);

/* The measured cost (ns per input byte) and ratio of the backend a
 * stream of this coding, level and kind (whole body or not) would use;
 * -1 for a coding this build lacks or a level outside its range. */
int adf_codec_prior(adf_coding_e coding, int level, int whole, double *cost,
                    double *ratio);

apr_off_t adf_stream_bytes_in(const adf_stream_t *s);
apr_off_t adf_stream_bytes_out(const adf_stream_t *s);
adf_coding_e adf_stream_coding(const adf_stream_t *s);
int adf_stream_level(const adf_stream_t *s);
/* The library that encodes it ("zlib", "isal", "libdeflate", ...). */
const char *adf_stream_backend(const adf_stream_t *s);

/* Coder state outlives its stream: each backend keeps a few idle states
 * for the next streams, and large blocks are mapped outside malloc's
 * arenas (adf_codec_pool.c).  Thread-safe, and safe across fork. */
typedef struct {
    apr_uint64_t made;              /* states made: no idle one fitted */
    apr_uint64_t reused;            /* states taken from an idle list */
    apr_uint64_t dropped;           /* idle states freed: over the caps,
                                     * idle too long, drained */
    apr_uint64_t blocks_mapped;     /* large blocks mapped */
    apr_uint64_t blocks_reused;     /* ... taken from the idle blocks */
    apr_uint64_t blocks_unmapped;
    int idle_states;                /* now */
    apr_size_t idle_state_bytes;
    int idle_blocks;
    apr_size_t idle_block_bytes;
    apr_size_t mapped_bytes;        /* large blocks, in use or idle */
} adf_codec_pool_stats_t;

void adf_codec_pool_stats(adf_codec_pool_stats_t *st);

/* The pool's fork handlers registered now (else at its first use).
 * glibc runs prepare handlers newest first and the others oldest first:
 * fork handlers registered after this one run outside the pool's lock,
 * wrapped around it. */
void adf_codec_pool_init(void);

/* Free the idle states and blocks unused for longer than idle (a
 * periodic call gives an idle process's coder memory back); 0: all of
 * them (a process's exit, tests). */
void adf_codec_pool_trim(apr_interval_time_t idle);
/* What the module's watchdog tick (every child, every load interval)
 * trims: coder memory idle for 10 s. */
#define ADF_CODEC_IDLE_TRIM apr_time_from_sec(10)
#define adf_codec_pool_drain() adf_codec_pool_trim(0)

/* At a process's end: the stats (*st), then everything drained, unless
 * the lock is held (by another thread, or by the code a signal handler
 * that ends the process interrupted: prefork's SIGTERM runs the child
 * pool's cleanups there), where waiting could be forever; then nothing is
 * done and 0 returned. */
int adf_codec_pool_exit(adf_codec_pool_stats_t *st);

#endif /* ADF_CODEC_H */
