/* A subrequest's verdict on another resource; see adf_access.h. */
#include "adf_access.h"
#include "adf_config.h"

#include <apr_strings.h>
#include <http_config.h>
#include <http_protocol.h>
#include <http_request.h>
#include <http_ssl.h>
#include <httpd.h>

#include <string.h>

/* r->pool's: the request's environment as the client's request came in,
 * before any module's rule set a variable (its internal redirects share
 * the pool and add REDIRECT_* of their own: a request for the URL asked
 * about would have none) */
#define ENV_AT_READ "adf_access.env"
/* ... set while r asks about another resource; and the subrequest's own
 * pool's, the request it asks for (for as long as it is made) */
#define ASKING "adf_access.asking"
#define ASKED "adf_access.asked"

/* mod_setenvif's pass (NULL without it): found by its module's name
 * among the post_read_request hooks, where it runs with the server's
 * rules (its header_parser hook then runs it with the sections'). */
static ap_HOOK_post_read_request_t *setenvif_pass;

/* Modules whose hooks find the state their post_read_request hook left
 * for the request by walking r->main and r->prev to the request the
 * client sent (mod_auth_digest: its parsed Authorization; without it,
 * its authentication of the request asked about writes through NULL).
 * That request's slot is copied to the one asked about. */
static const char *const walk_to_main[] = { "mod_auth_digest.c", NULL };
static module *walkers[sizeof(walk_to_main) / sizeof(walk_to_main[0])];

/* Does a section set what mod_ssl renegotiates a connection for (the
 * client's certificate, the ciphers)?  The request asked about would
 * renegotiate the client's connection, in the middle of a request it
 * never sent for that URL (TLS 1.2; TLS 1.3 refuses), and the answer
 * would tell a right guess from a wrong one: on TLS, no version kept at
 * another URL is used then (SSL_IN_PATHS); where the section is an <If>
 * (on a query string, a method: the check is a GET of the bare URL, no
 * request the client sent), none at all (SSL_IN_IF).  A .htaccess file
 * is not seen here. */
#define SSL_IN_PATHS 1
#define SSL_IN_IF 2
static int ssl_sections;

static int renegotiates(const ap_directive_t *d, int in)
{
    static const char *const paths[] = {
        "<Directory", "<DirectoryMatch", "<Location", "<LocationMatch",
        "<Files", "<FilesMatch", NULL
    };
    static const char *const ifs[] = { "<If", "<ElseIf", "<Else", NULL };
    static const char *const reneg[] = {
        "SSLVerifyClient", "SSLVerifyDepth", "SSLCipherSuite", NULL
    };
    int i, found = 0;

    for (; d; d = d->next) {
        int sub = in;

        for (i = 0; in && reneg[i]; i++) {
            if (!strcasecmp(d->directive, reneg[i])) {
                found |= in & SSL_IN_IF ? SSL_IN_IF : SSL_IN_PATHS;
            }
        }
        for (i = 0; paths[i]; i++) {
            sub |= strcasecmp(d->directive, paths[i]) ? 0 : SSL_IN_PATHS;
        }
        for (i = 0; ifs[i]; i++) {
            sub |= strcasecmp(d->directive, ifs[i]) ? 0 : SSL_IN_IF;
        }
        if (d->first_child) {
            found |= renegotiates(d->first_child, sub);
        }
    }
    return found;
}

void adf_access_post_config(void)
{
    apr_array_header_t *hooks = ap_hook_get_post_read_request();
    const ap_LINK_post_read_request_t *h;
    int i;

    ssl_sections = renegotiates(ap_conftree, 0);
    setenvif_pass = NULL;       /* a restart may load it elsewhere */
    for (i = 0; walk_to_main[i]; i++) {
        walkers[i] = ap_find_linked_module(walk_to_main[i]);
    }
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
    /* (only a server with dictionaries ever asks) */
    if (adf_config_dicts_used() && !r->prev && !r->main) {
        apr_pool_userdata_setn(apr_table_copy(r->pool, r->subprocess_env),
                               ENV_AT_READ, NULL, r->pool);
    }
    return DECLINED;
}

int adf_access_asked(const request_rec *r)
{
    void *v = NULL;

    apr_pool_userdata_get(&v, ASKED, r->pool);
    return v != NULL;
}

/* The subrequest made into the request a client would send for its URL,
 * from here (the first of its hooks after it is mapped the first time)
 * until it is answered: httpd's rules would otherwise see a subrequest of
 * this request, and not that one.  Its request line is its own (a rule
 * on THE_REQUEST); it is no subrequest (mod_rewrite's [NS], IS_SUBREQ;
 * every check runs, SetEnvIf's rules of its sections with them, where a
 * subrequest's whose merged configuration is its main request's runs
 * none); its variables are those the request came in with, before
 * SetEnvIf's and mod_rewrite's rules set theirs for its URL (its copy of
 * this request's would carry what this URL set: a variable that opens
 * this one would open that one), then SetEnvIf's server-wide rules. */
static int as_asked(request_rec *r)
{
    request_rec *m = r->main, *top;
    void *v = NULL, *env = NULL;
    int i;

    if (m) {
        apr_pool_userdata_get(&v, ASKING, m->pool);
    }
    if (!v) {
        return DECLINED;
    }
    apr_pool_userdata_setn(m, ASKED, NULL, r->pool);
    r->main = NULL;
    for (top = m; top->main || top->prev; top = top->main ? top->main
                                                           : top->prev) {
    }
    for (i = 0; walk_to_main[i]; i++) {
        void *state = walkers[i] ? ap_get_module_config(top->request_config,
                                                        walkers[i]) : NULL;

        if (walkers[i] && !state) {
            /* that request never ran its hooks (a 400 before them, then
             * an ErrorDocument): the module would write through NULL */
            return HTTP_FORBIDDEN;
        }
        if (state) {
            ap_set_module_config(r->request_config, walkers[i], state);
        }
    }
    r->the_request = apr_pstrcat(r->pool, "GET ", r->unparsed_uri, " ",
                                 m->protocol, NULL);
    r->protocol = m->protocol;
    r->proto_num = m->proto_num;
    apr_pool_userdata_get(&env, ENV_AT_READ, m->pool);
    r->subprocess_env = env ? apr_table_copy(r->pool, env)
                            : apr_table_make(r->pool, 4);
    if (setenvif_pass) {
        setenvif_pass(r);
    }
    return DECLINED;
}

void adf_access_register_hooks(void)
{
    /* before mod_setenvif's (APR_HOOK_MIDDLE) */
    ap_hook_post_read_request(keep_env, NULL, NULL, APR_HOOK_REALLY_FIRST);
    /* before mod_rewrite's and mod_proxy's (APR_HOOK_FIRST) */
    ap_hook_translate_name(as_asked, NULL, NULL, APR_HOOK_REALLY_FIRST);
}

int adf_access_may_read(request_rec *r, const char *uri,
                        const char *filename)
{
    request_rec *sub;
    int ok;

    if (!uri || *uri != '/' || !filename || adf_access_asked(r)
        || (ssl_sections && ap_ssl_conn_is_ssl(r->connection)
            && ((ssl_sections & SSL_IN_IF) || !r->filename
                || strcmp(filename, r->filename) || strcmp(uri, r->uri)))) {
        return 0;
    }
    apr_pool_userdata_setn(r, ASKING, NULL, r->pool);
    /* escaped again: the subrequest decodes it as the request's was */
    sub = ap_sub_req_lookup_uri(ap_escape_uri(r->pool, uri), r, NULL);
    apr_pool_userdata_setn(NULL, ASKING, NULL, r->pool);
    sub->main = r;
    ok = adf_access_asked(sub) && sub->status == HTTP_OK && sub->filename
         && !strcmp(sub->filename, filename)
         && !(sub->path_info && *sub->path_info);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "may this client read %s "
                  "(%s)? %s: %d, %s", uri, filename, ok ? "yes" : "no",
                  sub->status, sub->filename ? sub->filename : "no file");
    ap_destroy_sub_req(sub);
    return ok;
}
