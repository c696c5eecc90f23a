/* Response and request header rules every path shares: Vary, no-transform,
 * a declared Content-Encoding, the ETags of compressed representations
 * and the conditional headers that name them. */
#ifndef ADF_HEADERS_H
#define ADF_HEADERS_H

#include "adf_private.h"
#include "adf_coding.h"
#include "adf_digest.h"
#include "adf_codec.h"
#include "adf_negotiate.h"

/* What the response's own header tables (the handler's and the error
 * headers, where CGIs and mod_headers' "always" put theirs) say about
 * compressing it, read in one pass. */
typedef struct {
    const char *length;         /* the handler's first Content-Length */
    const char *encoding;       /* the first Content-Encoding that names a
                                 * coding ("identity" does not), or NULL */
    int no_transform;           /* Cache-Control: no-transform */
    int vary;                   /* 0: no Vary; 1: Vary without
                                 * Accept-Encoding; 2: with it, or "*" */
} adf_resp_fields_t;

void adf_resp_fields(const request_rec *r, adf_resp_fields_t *h);

/* Add "Accept-Encoding" to Vary unless it is there (or Vary is "*"),
 * beside anything else the response varies on.  h: the response's fields
 * as read since its headers last changed. */
void adf_merge_vary(request_rec *r, const adf_resp_fields_t *h);

/* Add token to Vary unless it is there or Vary is "*". */
void adf_vary_add(request_rec *r, const char *token);

/* Cache-Control: no-transform in the request. */
int adf_req_no_transform(const request_rec *r);

/* Does a Content-Encoding value name a coding ("identity" does not)? */
int adf_is_coding(const char *ce);

/* The Content-Encoding the response already declares: r->content_encoding
 * or, from its header tables (h), what a handler or mod_headers set. */
const char *adf_declared_encoding(const request_rec *r,
                                  const adf_resp_fields_t *h);

/* The ETag of a compressed representation is the handler's with a suffix
 * of this module's own inside the quotes: "abc" -> "abc-ad-gzip" on the
 * fly; a precompressed sibling's and a cache entry's also name their
 * bytes, "abc-ad-br-pre.<hex>" and "abc-ad-br-cache.<hex>" (the first 64
 * bits of their SHA-256), so no two bodies share a tag whatever FileETag
 * says and however equal their mtimes and lengths.  The suffixes are this
 * module's own, so a tag a backend made ("v1-gzip", mod_deflate's) is
 * never taken for one of ours. */
#define ADF_SIBLING_ETAG "-pre."
#define ADF_CACHE_ETAG "-cache."

/* The suffix of a sibling's (cache: a cache entry's) tag in coding c, for
 * bytes whose SHA-256 is digest. */
const char *adf_stored_etag_suffix(apr_pool_t *p, adf_coding_e c, int cache,
                                   const unsigned char *digest);

/* The suffix of a tag of coding d made against the dictionary whose
 * SHA-256 is hash: "-ad-dcz-<the hash's first 64 bits in hex>". */
const char *adf_dict_etag_suffix(apr_pool_t *p, const adf_coding_t *d,
                                 const unsigned char *hash);

/* Add suffix to the ETag in whichever table holds it: "abc" and W/"abc"
 * before the closing quote; a tag without one (httpd's for a negotiated
 * variant, "abc;def) gets it after the suffix.  No ETag, no change. */
void adf_etag_append(request_rec *r, const char *suffix);

/* The dictionary a client holds for r's response, or NULL (adf_dict_for;
 * passed in, since the dictionaries' side reads the request's headers
 * through this file). */
typedef const adf_dict_t *adf_dict_of_fn(request_rec *r,
                                         const adf_accept_t *acc);

/* Let If-None-Match / If-Match carrying the ETag of a representation
 * compressed on the fly match the handler's own (httpd bug 45023): our
 * suffixes are stripped for the codings this client accepts, a coding
 * made against a dictionary's with the one dict_of finds.  Tags of stored
 * bytes (siblings, cache entries) are left for
 * adf_match_stored_conditionals. */
void adf_strip_conditionals(request_rec *r, adf_dict_of_fn *dict_of);

/* The response will be stored bytes whose tag ends in suffix: make
 * If-None-Match / If-Match say, to the handler that evaluates them
 * against its own tag, whether the client named exactly these bytes
 * ("*") or not (a tag nothing has). */
void adf_match_stored_conditionals(request_rec *r, const char *suffix);


#endif /* ADF_HEADERS_H */
