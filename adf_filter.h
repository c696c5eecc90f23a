/* The ADAPTIVE_DEFLATE output filter and the hook that inserts it. */
#ifndef ADF_FILTER_H
#define ADF_FILTER_H

#include "adf_private.h"
#include <util_filter.h>

apr_status_t adf_out_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* insert_filter hook (last, once every other module has inserted its
 * filters): where AdaptiveDeflate is On, add the filter and make stock
 * mod_deflate/mod_brotli step aside; where precompressed siblings are
 * on, serve one if the plain file would go out byte for byte. */
void adf_insert_filter(request_rec *r);

/* Add the filter to r unless it is there. */
void adf_add_filter(request_rec *r);

#endif /* ADF_FILTER_H */
