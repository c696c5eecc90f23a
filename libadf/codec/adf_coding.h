/* Content codings.  Every fact about a coding lives in its descriptor,
 * defined next to its codec (adf_codec_<name>.c): the tokens, the sibling
 * extension, the ETag suffix, the level range and the defaults.  Nothing
 * else in the module names a coding.  Pure: no httpd.
 */
#ifndef ADF_CODING_H
#define ADF_CODING_H

#include <apr.h>

/* The codings this module knows; ADF_IDENTITY means "as is".  A build
 * may lack some of them: adf_coding() then returns NULL. */
typedef enum {
    ADF_IDENTITY = 0,
    ADF_GZIP = 1,
    ADF_BR = 2,
    ADF_ZSTD = 3,
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
    const char *ext;            /* precompressed sibling: F + ext */
    const char *etag_suffix;    /* inside the quotes of a compressed ETag */
    const char *level_word;     /* "level", "quality": in messages */
    int min_level, max_level;   /* what the codec accepts */
    int default_min, default_max;   /* the range the controller moves in */
    int strongest;              /* for siblings and the cache */
    const adf_codec_t *codec;
} adf_coding_t;

/* The descriptor of a coding, or NULL when this build lacks it. */
const adf_coding_t *adf_coding(adf_coding_e c);

/* The coding a token names (case-insensitive; aliases too), or NULL. */
const adf_coding_t *adf_coding_by_token(const char *token, apr_size_t len);

/* The coding whose sibling extension ends path (len bytes), or NULL. */
const adf_coding_t *adf_coding_by_ext(const char *path, apr_size_t len);

/* Content-Encoding token of a coding; NULL for identity. */
const char *adf_coding_name(adf_coding_e c);

#endif /* ADF_CODING_H */
