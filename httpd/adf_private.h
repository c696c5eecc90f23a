/* Private to the httpd side of the module: every file that logs includes
 * this first, so "LogLevel adaptive_deflate:trace3" covers them all. */
#ifndef ADF_PRIVATE_H
#define ADF_PRIVATE_H

#include "config.h"
/* httpd's ap_config_auto.h defines its own PACKAGE_* macros. */
#undef PACKAGE_BUGREPORT
#undef PACKAGE_NAME
#undef PACKAGE_STRING
#undef PACKAGE_TARNAME
#undef PACKAGE_URL
#undef PACKAGE_VERSION

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>

#ifdef APLOG_USE_MODULE
APLOG_USE_MODULE(adaptive_deflate);
#endif

extern module AP_MODULE_DECLARE_DATA adaptive_deflate_module;

/* Stable tags for warnings and errors, listed in docs/log-messages.md
 * (httpd's own AHnnnnn numbers are not ours to take). */
#define ADFLOGNO(n) "ADF" #n ": "

#define ADF_FILTER_NAME "ADAPTIVE_DEFLATE"
/* The module's handlers' names share a prefix (adf_handler tests it). */
#define ADF_HANDLER_PREFIX "adaptive-deflate-"
#define ADF_STATUS_HANDLER ADF_HANDLER_PREFIX "status"
#define ADF_NOTE_PREFIX "adaptive_deflate_"

#endif /* ADF_PRIVATE_H */
