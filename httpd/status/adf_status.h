/* The status page (SetHandler adaptive-deflate-status) and a section in
 * mod_status's page. */
#ifndef ADF_STATUS_H
#define ADF_STATUS_H

#include "adf_private.h"

int adf_status_handler(request_rec *r);

/* mod_status's status_hook. */
int adf_status_hook(request_rec *r, int flags);

#endif /* ADF_STATUS_H */
