/* Response and request header rules every path shares: Vary, no-transform,
 * a declared Content-Encoding, the ETags of compressed representations
 * and the conditional headers that name them. */
#ifndef ADF_HEADERS_H
#define ADF_HEADERS_H

#include "adf_private.h"
#include "adf_coding.h"
#include "adf_digest.h"
#include "adf_etag.h"
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

/* Add suffix to the ETag in whichever table holds it (adf_etag_suffixed:
 * weak, a representation whose bytes are not fixed by its content, gets
 * W/).  A line that is no tag is dropped; no ETag, no change. */
void adf_etag_append(request_rec *r, const char *suffix, int weak);

/* The response's tag as its handler set it (either table), or NULL. */
const char *adf_etag_of(const request_rec *r);

/* The response's one tag, in place of any it had. */
void adf_etag_set(request_rec *r, const char *tag);

/* The response is its client's alone: Cache-Control says "private" (in
 * place of "public" and "s-maxage", which would let a shared cache store
 * it for others), in whichever table carries the field. */
void adf_private_to_client(request_rec *r);

#endif /* ADF_HEADERS_H */
