/* Precompressed siblings: serve F.br / F.gz in place of F when the client
 * accepts them and they are fresh, through httpd's own static path. */
#ifndef ADF_STATIC_H
#define ADF_STATIC_H

#include "adf_private.h"

/* fixups hook, after mod_dir: swap r->filename to the chosen sibling. */
int adf_static_fixup(request_rec *r);

/* child_init: the per-process memory of stale siblings already logged. */
void adf_static_child_init(apr_pool_t *pchild, server_rec *s);

#endif /* ADF_STATIC_H */
