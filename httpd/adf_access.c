/* A subrequest's verdict on another resource; see adf_access.h. */
#include "adf_access.h"

#include <http_config.h>
#include <http_protocol.h>
#include <http_request.h>
#include <httpd.h>

#include <string.h>

/* r->pool's: the request's environment as it came in, before any
 * module's rule set a variable (a request's internal redirects share its
 * pool, and keep the one it came in with unless their own replaces it) */
#define ENV_AT_READ "adf_access.env"
/* ... set while r asks about another resource: the subrequest is that */
#define ASKING "adf_access.asking"

/* mod_setenvif's pass (NULL without it): found by its module's name
 * among the post_read_request hooks, where it runs with the server's
 * rules, and run again as httpd runs it (its header_parser hook) with
 * the section's rules on the second call for a request. */
static ap_HOOK_post_read_request_t *setenvif_pass;

void adf_access_post_config(void)
{
    apr_array_header_t *hooks = ap_hook_get_post_read_request();
    const ap_LINK_post_read_request_t *h;
    int i;

    setenvif_pass = NULL;       /* a restart may load it elsewhere */
    if (!hooks) {
        return;
    }
    h = (const ap_LINK_post_read_request_t *)hooks->elts;
    for (i = 0; i < hooks->nelts; i++) {
        if (h[i].szName && !strcmp(h[i].szName, "mod_setenvif.c")) {
            setenvif_pass = h[i].pFunc;
        }
    }
}

static int keep_env(request_rec *r)
{
    apr_pool_userdata_setn(apr_table_copy(r->pool, r->subprocess_env),
                           ENV_AT_READ, NULL, r->pool);
    return DECLINED;
}

static int asked(const request_rec *r)
{
    void *v = NULL;

    if (r->main) {
        apr_pool_userdata_get(&v, ASKING, r->main->pool);
    }
    return v != NULL;
}

/* The subrequest's environment as a request the client sent for its URL
 * would have it at its access checks, not its main request's copy: httpd
 * runs SetEnvIf for a request a client sent alone, and the copy carries
 * the variables the main request's URL set (a rule that opens that URL
 * would open this one; one that shuts this URL would never be set).  The
 * server's rules here, before mod_rewrite's (which set theirs again). */
static int env_server(request_rec *r)
{
    void *env = NULL;

    if (!asked(r)) {
        return DECLINED;
    }
    apr_pool_userdata_get(&env, ENV_AT_READ, r->main->pool);
    r->subprocess_env = env ? apr_table_copy(r->pool, env)
                            : apr_table_make(r->pool, 4);
    if (setenvif_pass) {
        setenvif_pass(r);
    }
    return DECLINED;
}

/* ... and the rules of the URL's sections, before any access check. */
static int env_section(request_rec *r)
{
    if (asked(r) && setenvif_pass) {
        setenvif_pass(r);
    }
    return DECLINED;
}

void adf_access_register_hooks(void)
{
    /* before mod_setenvif's (APR_HOOK_MIDDLE) */
    ap_hook_post_read_request(keep_env, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_translate_name(env_server, NULL, NULL, APR_HOOK_REALLY_FIRST);
    /* the first of the checks a subrequest runs, whatever Satisfy says */
    ap_hook_access_checker(env_section, NULL, NULL, APR_HOOK_REALLY_FIRST);
}

int adf_access_may_read(request_rec *r, const char *uri,
                        const char *filename)
{
    ap_conf_vector_t *conf = r->per_dir_config;
    request_rec *sub;
    int ok;

    if (!uri || *uri != '/' || !filename) {
        return 0;
    }
    /* httpd takes a subrequest whose merged configuration is its main
     * request's very one as let in already, and runs none of its checks:
     * a rule that tells two URLs of one section apart (Require expr,
     * Require file-owner) would not be asked.  r's own, as a copy of the
     * same settings, is not that one while the subrequest is made. */
    r->per_dir_config = ap_merge_per_dir_configs(r->pool, conf,
                                                 ap_create_per_dir_config(
                                                     r->pool));
    apr_pool_userdata_setn(r, ASKING, NULL, r->pool);
    /* escaped again: the subrequest decodes it as the request's was */
    sub = ap_sub_req_lookup_uri(ap_escape_uri(r->pool, uri), r, NULL);
    apr_pool_userdata_setn(NULL, ASKING, NULL, r->pool);
    r->per_dir_config = conf;
    ok = sub->status == HTTP_OK && sub->filename
         && !strcmp(sub->filename, filename)
         && !(sub->path_info && *sub->path_info);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "may this client read %s "
                  "(%s)? %s: %d, %s", uri, filename, ok ? "yes" : "no",
                  sub->status, sub->filename ? sub->filename : "no file");
    ap_destroy_sub_req(sub);
    return ok;
}
