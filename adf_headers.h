/* Response and request header rules every path shares: Vary, no-transform,
 * a declared Content-Encoding, the ETags of compressed representations
 * and the conditional headers that name them. */
#ifndef ADF_HEADERS_H
#define ADF_HEADERS_H

#include "adf_private.h"
#include "adf_coding.h"

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
 * as read since its headers last changed, or NULL to read them now. */
void adf_merge_vary(request_rec *r, const adf_resp_fields_t *h);

/* Cache-Control: no-transform in the request. */
int adf_req_no_transform(const request_rec *r);

/* Does a Content-Encoding value name a coding ("identity" does not)? */
int adf_is_coding(const char *ce);

/* The Content-Encoding the response already declares: r->content_encoding
 * or, from its header tables (h), what a handler or mod_headers set. */
const char *adf_declared_encoding(const request_rec *r,
                                  const adf_resp_fields_t *h);

/* What the ETag of a sibling and of a cache entry carry after their
 * coding's suffix: they and the on-the-fly output of the same coding are
 * different bytes. */
#define ADF_SIBLING_ETAG "-pre"
#define ADF_CACHE_ETAG "-cache"

/* Whose bytes a compressed ETag names. */
#define ADF_ETAG_FLY 0          /* compressed on the fly */
#define ADF_ETAG_SIBLING 1      /* a precompressed sibling */
#define ADF_ETAG_CACHE 2        /* a compressed cache entry */

/* "abc" -> "abc-ad-gzip" (a sibling: "abc-ad-gzip-pre", a cache entry:
 * "abc-ad-gzip-cache"), W/"abc" -> W/"abc-ad-gzip", in whichever table
 * holds the ETag; a missing or malformed ETag is left alone.  The
 * suffixes are this module's own, so a tag a backend made ("v1-gzip",
 * mod_deflate's) is never taken for one of ours. */
void adf_suffix_etag(request_rec *r, adf_coding_e c, int kind);

/* Let If-None-Match / If-Match carrying the ETag of a compressed
 * representation match the handler's own (httpd bug 45023): our
 * suffixes are stripped for the codings this client accepts. */
void adf_strip_conditionals(request_rec *r);

/* fixups hook: adf_strip_conditionals where this module may answer with
 * a compressed representation. */
int adf_fixup_conditionals(request_rec *r);

#endif /* ADF_HEADERS_H */
