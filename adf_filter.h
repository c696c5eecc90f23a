/* The ADAPTIVE_DEFLATE output filter and the request hooks around it. */
#ifndef ADF_FILTER_H
#define ADF_FILTER_H

#include "adf_private.h"
#include <util_filter.h>

apr_status_t adf_out_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* insert_filter hook: add the filter where AdaptiveDeflate is On. */
void adf_insert_filter(request_rec *r);

/* fixups hook: let If-None-Match / If-Match with the ETag of a compressed
 * representation match the handler's own ETag (httpd bug 45023). */
int adf_fixup_conditionals(request_rec *r);

/* Does a table's Cache-Control say no-transform? */
int adf_no_transform(const apr_table_t *t);

/* Add "Accept-Encoding" to Vary unless it is there (or Vary is "*"). */
void adf_merge_vary(request_rec *r);

#endif /* ADF_FILTER_H */
