/* Precompressed siblings: serving them, and guarding direct requests. */
#ifndef ADF_STATIC_H
#define ADF_STATIC_H

#include "adf_private.h"
#include "adf_config.h"

void adf_static_child_init(apr_pool_t *pchild, server_rec *s);

/* Called last in insert_filter: serve a fresh sibling instead of F when
 * F would go out byte for byte and the client accepts its coding. */
void adf_static_swap(request_rec *r, const adf_dir_conf_t *dc);

/* fixups hook: a request for F.gz (F.br...) whose F exists is authorised
 * as F; in subrequests such a sibling is not found. */
int adf_static_guard(request_rec *r);

#endif /* ADF_STATIC_H */
