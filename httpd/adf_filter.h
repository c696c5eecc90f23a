/* The ADAPTIVE_DEFLATE output filter and the hook that inserts it. */
#ifndef ADF_FILTER_H
#define ADF_FILTER_H

#include "adf_private.h"
#include <util_filter.h>

apr_status_t adf_out_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* Register the filter (register_hooks): after mod_headers' output fixup
 * (AP_FTYPE_CONTENT_SET), as mod_deflate, so headers set there are seen. */
void adf_filter_register(void);

/* The filter's init function: the sibling swap, before the handler. */
int adf_filter_init(ap_filter_t *f);

/* insert_filter hook: where AdaptiveDeflate is On, add the filter and make
 * stock mod_deflate/mod_brotli step aside; where precompressed siblings
 * are on, add it for its init function to look for one. */
void adf_insert_filter(request_rec *r);

/* post_config: which stock modules read no-gzip/no-brotli (logged once,
 * at start). */
void adf_filter_post_config(server_rec *s);

/* Add the filter to r unless it is there. */
void adf_add_filter(request_rec *r);

#endif /* ADF_FILTER_H */
