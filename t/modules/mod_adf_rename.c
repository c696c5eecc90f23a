/* A test module: a handler that runs before every other, renames the file
 * $ADF_TEST_RENAME_FROM over $ADF_TEST_RENAME_TO (when the first exists)
 * and declines.  For t/swapped.t: it runs after the module's swap and
 * before the handler that sends the sibling, as another process's rename
 * would between the two. */
#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>

#include <stdio.h>
#include <stdlib.h>

static int rename_handler(request_rec *r)
{
    const char *from = getenv("ADF_TEST_RENAME_FROM");
    const char *to = getenv("ADF_TEST_RENAME_TO");

    if (from && to && r->main == NULL) {
        rename(from, to);
    }
    return DECLINED;
}

static void register_hooks(apr_pool_t *p)
{
    ap_hook_handler(rename_handler, NULL, NULL, APR_HOOK_REALLY_FIRST);
}

module AP_MODULE_DECLARE_DATA adf_rename_module = {
    STANDARD20_MODULE_STUFF,
    NULL, NULL, NULL, NULL, NULL,
    register_hooks
};
