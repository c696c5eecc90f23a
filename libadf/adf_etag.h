/* Entity tags of this module's representations (RFC 9110, 8.8.3): made,
 * read back from a client's conditional headers, and judged: does the
 * tag a client holds name a representation of the current content that
 * it accepts now?  Pure: no httpd, only APR.
 *
 * A representation's tag is the entity's own (the handler's, its "base")
 * with a suffix of this module's inside the quotes:
 *   "B"                   identity: the handler's own bytes and tag
 *   W/"B-ad-gzip"         made on the fly: weak, because its bytes follow
 *                         the level, and the level follows the load
 *   W/"B-ad-dcz-<hex>"    made on the fly against the dictionary whose
 *                         SHA-256 begins with <hex>
 *   "S-ad-br-pre.<hex>"   a precompressed sibling: S is the sibling's own
 *                         tag, <hex> the beginning of its bytes' SHA-256
 *   "S-ad-br-cache.<hex>" a cache entry, the same way
 * (<hex>: 16 lower-case hex digits, the first 64 bits.)  Only bytes fixed
 * by their content get a strong tag.  httpd's tag for a negotiated
 * variant (MultiViews) lacks its closing quote ("B;V): a suffix goes at
 * its end and closes it; bases are compared without the quotes.
 */
#ifndef ADF_ETAG_H
#define ADF_ETAG_H

#include <apr_pools.h>

#include "adf_coding.h"
#include "adf_negotiate.h"

#define ADF_ETAG_SIBLING "-pre."
#define ADF_ETAG_CACHE "-cache."
/* the hex digits of a digest a suffix carries */
#define ADF_ETAG_HEX 16

typedef enum {
    ADF_TAG_PLAIN,      /* no suffix of ours: the handler's bytes */
    ADF_TAG_FLY,        /* a coding made on the fly */
    ADF_TAG_DICT,       /* ... against a dictionary */
    ADF_TAG_SIBLING,    /* stored bytes: a precompressed sibling */
    ADF_TAG_CACHE,      /* stored bytes: a cache entry */
    ADF_TAG_ANY         /* "*" */
} adf_tag_kind_e;

/* One entity tag as a client sent it. */
typedef struct {
    const char *text;           /* the whole tag (W/ and quotes) */
    apr_size_t len;
    int weak;
    const char *opaque;         /* after the opening quote */
    apr_size_t opaque_len;      /* ... up to the closing one */
    apr_size_t base_len;        /* ... the base's length, our suffix
                                 * and the closing quote left out */
    adf_tag_kind_e kind;
    adf_coding_e coding;        /* ADF_IDENTITY: PLAIN, ANY */
    const char *hex;            /* DICT, SIBLING, CACHE: the digest's
                                 * ADF_ETAG_HEX digits in text */
} adf_tag_t;

/* The next element of a list of tags (If-None-Match, If-Match; a lone
 * If-Range value) at *s, into *t; *s moves past it and its comma.
 * Returns 1, or 0 at the end.  An element that is no tag (a bare word,
 * a quote in the wrong place) is skipped; an unclosed quote (a
 * negotiated tag) runs to the end of the list.  A tag naming a coding
 * this build lacks is PLAIN: nothing the server makes now. */
int adf_tag_next(const char **s, adf_tag_t *t);

/* What the module would send now, as far as a held tag can name it. */
typedef struct {
    const adf_accept_t *accept;     /* the client's Accept-Encoding now */
    const unsigned char *dict;      /* the SHA-256 of the dictionary it
                                     * holds that the server would code
                                     * against now; NULL: none */
    const char *stored;             /* the suffix of the stored bytes that
                                     * go out (adf_stored_etag_suffix);
                                     * NULL: none */
    adf_coding_e chosen;            /* the coding chosen now */
} adf_tag_now_t;

/* Does t name a representation the client may keep now, whatever
 * version of the content it was made from: its coding (identity too)
 * accepted now; against the dictionary the client holds now; stored
 * bytes exactly those that go out now.  "*" never. */
int adf_tag_acceptable(const adf_tag_t *t, const adf_tag_now_t *now);

/* Was t made from the content whose tag is etag (the handler's, as it
 * set it): the same base, weak or not (RFC 9110's weak comparison)?
 * Stored bytes' tags name their bytes by digest: acceptable is enough. */
int adf_tag_of(const adf_tag_t *t, const char *etag);

/* If-None-Match (list, as the client sent it) against the current
 * content (etag: its handler's tag; NULL: none) and what goes out now.
 * 1: not modified, the client keeps what it holds: *pick (*pick_len) is
 * its own tag, which the 304 carries (of several: the one naming what is
 * chosen now, else the first), NULL for "*" (the tag that would go out).
 * 0: a 200 with the representation chosen now. */
int adf_tag_not_modified(const char *list, const char *etag,
                         const adf_tag_now_t *now, const char **pick,
                         apr_size_t *pick_len);

/* list as the handler should see it, to compare with its own tag: each
 * tag the client may keep (adf_tag_acceptable) by its base, W/ kept;
 * stored bytes' tags as they are (the swap judges them); "*" as it is;
 * the others left out, and where none is left a tag no handler makes
 * (not an empty field, which would let a date decide).  strong: If-Match,
 * whose comparison no weak tag passes: tags of output made on the fly
 * are left out.  Returns list itself when nothing changes. */
const char *adf_tag_for_handler(apr_pool_t *p, const char *list,
                                const adf_tag_now_t *now, int strong);

/* May a Range with this If-Range (NULL: none) be served from a response
 * whose tag is etag?  Only a strong tag equal to etag (strong comparison:
 * RFC 9110, 13.1.5), a date only where one date cannot name two byte
 * sequences (varies: the response is one of several representations with
 * the same Last-Modified), or no If-Range at all. */
int adf_tag_range_ok(const char *if_range, const char *etag, int varies);

/* A tag of no handler's. */
#define ADF_ETAG_NONE "\"adaptive-deflate:none\""

/* The suffix of a tag of coding c made on the fly; against a dictionary
 * (c needs one) the one whose SHA-256 is dict_hash. */
const char *adf_fly_etag_suffix(apr_pool_t *p, adf_coding_e c,
                                const unsigned char *dict_hash);

/* The suffix of a sibling's (cache: a cache entry's) tag in coding c, for
 * bytes whose SHA-256 is digest. */
const char *adf_stored_etag_suffix(apr_pool_t *p, adf_coding_e c, int cache,
                                   const unsigned char *digest);

/* tag (W/ and a quoted string) with suffix inside its closing quote, and
 * W/ in front when weak: "abc" -> W/"abc-ad-gzip"; a tag without its
 * closing quote gets one after the suffix.  NULL when tag is no tag
 * (Header set ETag abc): it cannot hold a suffix. */
char *adf_etag_suffixed(apr_pool_t *p, const char *tag, const char *suffix,
                        int weak);

#endif /* ADF_ETAG_H */
