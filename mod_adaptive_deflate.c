/* mod_adaptive_deflate: response compression whose level follows the
 * server's CPU load.  This file is glue only: the module record, the
 * directive table (adf_config.c) and the hooks. */
#include "adf_private.h"
#include "adf_access.h"
#include "adf_cache.h"
#include "adf_codec.h"
#include "adf_conditional.h"
#include "adf_config.h"
#include "adf_counters.h"
#include "adf_dict.h"
#include "adf_filter.h"
#include "adf_fork.h"
#include "adf_headers.h"
#include "adf_held.h"
#include "adf_memo.h"
#include "adf_sampling.h"
#include "adf_static.h"
#include "adf_status.h"

#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mod_status.h>
#include <mod_watchdog.h>

static int adf_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                           apr_pool_t *ptemp, server_rec *s)
{
    int rv;

    adf_config_init(pconf);
    adf_filter_post_config(s);
    adf_dict_post_config(pconf, s);
    adf_access_post_config();
    rv = adf_shm_post_config(pconf, plog, ptemp, s);
    return rv == OK ? adf_cache_post_config(pconf, plog, ptemp, s) : rv;
}

/* The coders' idle states and blocks go with the child (after its
 * subpools, whose streams give theirs back first); at debug level, what
 * reuse did in its life. */
static apr_status_t drain_codecs(void *data)
{
    adf_codec_pool_stats_t st;

    if (!adf_codec_pool_exit(&st)) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, (server_rec *)data,
                     "coder states at exit: left as they are (their lock "
                     "is held: by another thread, or by what this exit "
                     "interrupted)");
        return APR_SUCCESS;
    }
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, (server_rec *)data,
                 "coder states at exit: %" APR_UINT64_T_FMT " made, %"
                 APR_UINT64_T_FMT " reused, %" APR_UINT64_T_FMT " dropped; "
                 "large blocks: %" APR_UINT64_T_FMT " mapped, %"
                 APR_UINT64_T_FMT " reused, %" APR_UINT64_T_FMT " unmapped; "
                 "idle: %d states of %" APR_SIZE_T_FMT " bytes, %d blocks of %"
                 APR_SIZE_T_FMT " bytes", st.made, st.reused, st.dropped,
                 st.blocks_mapped, st.blocks_reused, st.blocks_unmapped,
                 st.idle_states, st.idle_state_bytes, st.idle_blocks,
                 st.idle_block_bytes);
    return APR_SUCCESS;
}

static void adf_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_pool_cleanup_register(pchild, s, drain_codecs,
                              apr_pool_cleanup_null);
    /* The pool's fork handlers first, so that the signals held back
     * across a fork are held while the pool's lock is (adf_fork.c). */
    adf_codec_pool_init();
    adf_fork_child_init(pchild, s);
    adf_memo_child_init(pchild);
    adf_held_child_init(pchild);
    adf_static_child_init(pchild, s);
    adf_cache_child_init(pchild, s);
}

/* Where this module may answer with a compressed representation, the
 * tags it gave those are made to match the handler's.  Elsewhere no tag
 * of ours was handed out (unless the filter is set by hand:
 * adf_insert_filter): the header goes to the handler (a CGI, a proxied
 * backend) exactly as the client sent it.  Then a sibling or a cache
 * entry asked for by its own name is turned away.  One hook for the
 * three: each hook a request runs through costs its dispatch and a call
 * on every response, and most have nothing to do here. */
static int adf_fixups(request_rec *r)
{
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    int rv;

    if (adf_config_dicts_used() && adf_access_asked(r)) {
        return DECLINED;    /* asked about: nothing is served */
    }
    if (adf_conf_enabled(dc) || adf_conf_precompressed(dc)) {
        adf_cond_for_handler(r, adf_dict_held);
    }
    rv = adf_static_guard(r);
    return rv == DECLINED ? adf_cache_guard(r) : rv;
}

/* The module's handlers (the status page, a dictionary's URL), behind
 * one test of the prefix their names share: most requests are neither. */
static int adf_handler(request_rec *r)
{
    const char *h = r->handler, *p = ADF_HANDLER_PREFIX;

    /* by hand: a name parts from the prefix within a character or two,
     * where a strncmp costs its call and set-up */
    while (h && *p && *h == *p) {
        h++;
        p++;
    }
    if (!h || *p) {
        return DECLINED;
    }
    return *h == 's' ? adf_status_handler(r) : adf_dict_handler(r);
}

static int adf_log_transaction(request_rec *r)
{
    adf_shm_count_egress(r->bytes_sent);
    return DECLINED;
}

static void adf_register_hooks(apr_pool_t *p)
{
    /* Before mod_watchdog's post_config (APR_HOOK_LAST) starts threads. */
    ap_hook_post_config(adf_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_check_config(adf_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_check_config(adf_cache_check_config, NULL, NULL,
                         APR_HOOK_MIDDLE);
    ap_hook_child_init(adf_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(adf_log_transaction, NULL, NULL,
                            APR_HOOK_MIDDLE);
    ap_hook_fixups(adf_fixups, NULL, NULL, APR_HOOK_MIDDLE);
    /* Last, so an explicit ADAPTIVE_DEFLATE is already there to be found;
     * the sibling swap waits for the filter's init function. */
    ap_hook_insert_filter(adf_insert_filter, NULL, NULL,
                          APR_HOOK_REALLY_LAST);
    APR_OPTIONAL_HOOK(ap, watchdog_need, adf_shm_watchdog_need, NULL, NULL,
                      APR_HOOK_MIDDLE);
    ap_hook_handler(adf_handler, NULL, NULL, APR_HOOK_MIDDLE);
    /* A dictionary's URL before mod_alias and the core map it to a file. */
    ap_hook_translate_name(adf_dict_translate, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_map_to_storage(adf_dict_map_to_storage, NULL, NULL,
                           APR_HOOK_FIRST);
    /* the default handler's place, for siblings and cache hits: after
     * every handler that might claim the request */
    ap_hook_handler(adf_static_handler, NULL, NULL, APR_HOOK_REALLY_LAST - 1);
    APR_OPTIONAL_HOOK(ap, status_hook, adf_status_hook, NULL, NULL,
                      APR_HOOK_MIDDLE);
    adf_access_register_hooks();
    adf_coding_init();
    adf_filter_register();
    adf_static_register();
}

/* Declared by hand: adf_private.h already did APLOG_USE_MODULE. */
module AP_MODULE_DECLARE_DATA adaptive_deflate_module = {
    STANDARD20_MODULE_STUFF,
    adf_create_dir_conf,
    adf_merge_dir_conf,
    adf_create_srv_conf,
    adf_merge_srv_conf,
    adf_cmds,
    adf_register_hooks
};
