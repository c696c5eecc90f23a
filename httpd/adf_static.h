/* Precompressed siblings: serving them, and guarding direct requests. */
#ifndef ADF_STATIC_H
#define ADF_STATIC_H

#include "adf_private.h"
#include "adf_config.h"

void adf_static_child_init(apr_pool_t *pchild, server_rec *s);

/* From the filter's init function (every filter is in place, the handler
 * has not run): serve a fresh sibling instead of F when F would go out
 * byte for byte and the client accepts its coding. */
void adf_static_swap(request_rec *r, const adf_dir_conf_t *dc);

/* handler hook, in the default handler's place: a sibling or a cache
 * entry is sent from the descriptor its check opened. */
int adf_static_handler(request_rec *r);

/* Registers the filter that gives r back F's name once the default
 * handler has opened the sibling (register_hooks). */
void adf_static_register(void);

/* The response turned out to say Cache-Control: no-transform, or to be
 * encoded already (mod_headers sets either after the swap): put F back in
 * bb, with F's headers; keep_encoding leaves the Content-Encoding header
 * that declares F's own coding. */
apr_status_t adf_static_unswap(request_rec *r, apr_bucket_brigade *bb,
                               int keep_encoding);

/* fixups hook: where precompressed serving applies to F, a request for
 * F.gz (F.br, ...) itself is not found; nor is a file adaptive-precompress
 * marked, wherever it is. */
int adf_static_guard(request_rec *r);

#endif /* ADF_STATIC_H */
