/* Content codings as data.  Every fact the module asks of a coding lives
 * in its descriptor (adf_coding_t), defined with its backends in
 * adf_codec_<name>.c; the registry (adf_coding.c) finds descriptors by id,
 * token and extension and orders them.  Adding a coding: a line in
 * ADF_CODINGS below, its descriptor and backend file, its build line and
 * its tests (HACKING.md).  Pure: no httpd.
 */
#ifndef ADF_CODING_H
#define ADF_CODING_H

#include <apr.h>

/* The codings this module knows, one X(ID, name, levels directive) each:
 * ADF_<ID> is its id, adf_coding_<name> its descriptor, and the directive
 * sets the range its levels move in.  Ids index the shared counters and
 * name the codings of cache entries, so lines are only ever appended. */
#define ADF_CODINGS(X) \
    X(GZIP, gzip, "AdaptiveDeflateGzipLevels") \
    X(BR, brotli, "AdaptiveDeflateBrotliQualities") \
    X(ZSTD, zstd, "AdaptiveDeflateZstdLevels") \
    X(DCZ, dcz, "AdaptiveDeflateDczLevels")

/* ADF_IDENTITY means "as is".  A build may lack some codings:
 * adf_coding() then returns NULL. */
typedef enum {
    ADF_IDENTITY = 0,
#define ADF_CODING_ID(id, name, directive) ADF_##id,
    ADF_CODINGS(ADF_CODING_ID)
#undef ADF_CODING_ID
    ADF_NCODINGS
} adf_coding_e;

/* Longest preference list (every coding once). */
#define ADF_MAX_PREFS (ADF_NCODINGS - 1)
/* Levels are 0..ADF_MAX_LEVEL on every coding's own scale. */
#define ADF_MAX_LEVEL 19

typedef struct adf_codec_t adf_codec_t;

typedef struct {
    adf_coding_e id;
    const char *token;          /* Content-Encoding token */
    const char *alias;          /* also accepted in Accept-Encoding, or NULL */
    const char *ext;            /* precompressed sibling and cache entry:
                                 * F + ext; NULL: neither */
    const char *etag_suffix;    /* inside the quotes of a compressed ETag */
    const char *level_word;     /* "level", "quality": in messages */
    int min_level, max_level;   /* what the codec accepts */
    int default_min, default_max;   /* the range the controller moves in */
    int strongest;              /* for siblings and the cache */
    int rank;                   /* server preference on equal q: 1 first */
    int cache_rank;             /* the order cache entries are made in, 1
                                 * first; 0: the cache makes none */
    int pads;                   /* a header field to pad (length hiding) */
    int whole;                  /* a backend that wants the whole input at
                                 * once is better (ADF_STREAM_WHOLE) */
    int needs_dict;             /* codes against a dictionary the client
                                 * holds: never negotiated without one */
    const char *dict_magic;     /* what precedes the dictionary's SHA-256 */
    apr_size_t dict_magic_len;  /* at the start of the body */
    const adf_codec_t *codec;   /* NULL: this build lacks the library */
} adf_coding_t;

/* The descriptor of a coding, or NULL when this build lacks it. */
const adf_coding_t *adf_coding(adf_coding_e c);

/* The coding a token names (case-insensitive; aliases too), or NULL. */
const adf_coding_t *adf_coding_by_token(const char *token, apr_size_t len);

/* The coding whose sibling extension ends path (len bytes), or NULL. */
const adf_coding_t *adf_coding_by_ext(const char *path, apr_size_t len);

/* Once, before threads (the module's hooks): what adf_coding_by_ext
 * rules names out by.  Without it the same answers, a little slower. */
void adf_coding_init(void);

/* Content-Encoding token of a coding; NULL for identity. */
const char *adf_coding_name(adf_coding_e c);

/* The directive that sets a coding's level range (built or not). */
const char *adf_coding_directive(adf_coding_e c);

/* The codings this build has that are negotiated without a dictionary,
 * in server preference order (rank); how many (at most ADF_MAX_PREFS). */
int adf_coding_prefs(adf_coding_e *out);

/* The codings this build has that the cache makes, in the order it makes
 * them (cache_rank); how many. */
int adf_coding_cache_order(adf_coding_e *out);

#endif /* ADF_CODING_H */
