/* Dictionary transport on httpd's side; see adf_dict.h. */
#include "adf_dict.h"
#include "adf_access.h"
#include "adf_cache.h"
#include "adf_config.h"
#include "adf_dictmatch.h"
#include "adf_request.h"
#include "adf_sf.h"
#include "adf_sampling.h"

#include <apr_strings.h>
#include <http_protocol.h>
#include <http_request.h>

static const apr_array_header_t *dicts_of(const server_rec *s)
{
    const adf_srv_conf_t *sc = ap_get_module_config(s->module_config,
                                                    &adaptive_deflate_module);

    return sc->dicts && sc->dicts->nelts ? sc->dicts : NULL;
}

/* ---- serving a dictionary ---------------------------------------------- */

/* adf_dict_translate where there are dictionaries; apart, so that a
 * server without any pays for the one test alone. */
static int __attribute__((noinline)) translate(request_rec *r)
{
    const apr_array_header_t *a = dicts_of(r->server);
    int i;

    for (i = 0; a && r->uri && i < a->nelts; i++) {
        const adf_dict_conf_t *dc = DICT_AT(a, i);

        if (!strcmp(r->uri, dc->url)) {
            adf_req(r)->served_dict = dc;
            r->handler = ADF_DICT_HANDLER;
            r->filename = apr_pstrdup(r->pool, dc->file);
            return OK;
        }
    }
    return DECLINED;
}

int adf_dict_translate(request_rec *r)
{
    return adf_config_dicts_used() ? translate(r) : DECLINED;
}

int adf_dict_map_to_storage(request_rec *r)
{
    const adf_req_t *st;

    if (!r->handler || strcmp(r->handler, ADF_DICT_HANDLER)) {
        return DECLINED;
    }
    st = adf_req_peek(r);
    return st && st->served_dict ? OK : DECLINED;
}

/* Will r's response go out whole?  Use-As-Dictionary only then: a part
 * of it (a 206, which the range filter makes after this module looked)
 * is no dictionary.  A HEAD carries it, as the same GET would (RFC 9110,
 * 9.3.2): it has no content to keep, and a cache refreshing a stored GET
 * with it keeps the field. */
static int whole(const request_rec *r)
{
    return r->status == HTTP_OK && !apr_table_get(r->headers_in, "Range");
}

int adf_dict_handler(request_rec *r)
{
    const adf_req_t *st;
    const adf_dict_conf_t *dc;
    apr_bucket_brigade *bb;
    int rv;

    if (!r->handler || strcmp(r->handler, ADF_DICT_HANDLER)
        || !(st = adf_req_peek(r)) || !(dc = st->served_dict)) {
        return DECLINED;
    }
    r->allowed = AP_METHOD_BIT << M_GET;
    if (r->method_number != M_GET) {
        return HTTP_METHOD_NOT_ALLOWED;
    }
    ap_set_content_type(r, "text/plain");
    apr_table_setn(r->headers_out, "ETag", dc->etag);
    if (whole(r)) {
        apr_table_setn(r->headers_out, "Use-As-Dictionary", dc->use_as);
    }
    apr_table_setn(r->headers_out, "Cache-Control", dc->cache_control);
    if ((rv = ap_meets_conditions(r)) != OK) {
        return rv;
    }
    ap_set_content_length(r, (apr_off_t)dc->dict.len);
    if (r->header_only) {
        return OK;
    }
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(
        (const char *)dc->dict.data, dc->dict.len, bb->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    return ap_pass_brigade_fchk(r, bb, "sending a dictionary");
}

/* May r's client fetch dc at its URL?  A dictionary it may not read is
 * neither advertised to it nor used for it: its bytes, named or not,
 * would tell what they are. */
static int may_fetch(request_rec *r, const adf_dict_conf_t *dc)
{
    return adf_access_may_read(r, dc->url, dc->file);
}

void adf_dict_link(request_rec *r)
{
    const apr_array_header_t *a;
    int i;

    if (!(a = dicts_of(r->server)) || !r->content_type
        || strncasecmp(r->content_type, "text/html", 9)) {
        return;
    }
    for (i = 0; i < a->nelts; i++) {
        if (may_fetch(r, DICT_AT(a, i))) {
            apr_table_addn(r->headers_out, "Link",
                           apr_pstrcat(r->pool, "<", DICT_AT(a, i)->url,
                                       ">; rel=\"compression-dictionary\"",
                                       NULL));
        }
    }
}

/* ---- using one --------------------------------------------------------- */

/* The request's path as sent (percent-encoded, no query). */
static const char *sent_path(const request_rec *r)
{
    return r->parsed_uri.path ? r->parsed_uri.path : r->uri;
}

/* Does the cache keep versions of r's file as dictionaries here? */
static int versions_here(const request_rec *r, const adf_dir_conf_t *dc)
{
    return adf_conf_dict_versions(dc) && adf_coding(ADF_DCZ)
           && r->finfo.filetype == APR_REG
           && adf_cache_applies((request_rec *)r, dc);
}

int adf_dict_could(const request_rec *r)
{
    const apr_array_header_t *a;
    const adf_dir_conf_t *dc;
    const char *path;
    int i;

    if (!adf_config_dicts_used()) {
        return 0;
    }
    a = dicts_of(r->server);
    dc = ap_get_module_config(r->per_dir_config, &adaptive_deflate_module);
    path = sent_path(r);
    if (!adf_conf_dcz(dc)) {
        return 0;
    }
    if (versions_here(r, dc)) {
        return 1;
    }
    for (i = 0; a && path && i < a->nelts; i++) {
        if (adf_dict_pattern_matches(DICT_AT(a, i)->match, path)) {
            return 1;
        }
    }
    return 0;
}

int adf_dict_affordable(request_rec *r, const adf_dir_conf_t *dc)
{
    const adf_coding_t *d = adf_coding(ADF_DCZ);
    adf_load_view_t load;
    double cost, ratio;
    int level;

    if (!d) {
        return 0;
    }
    level = dc->level_min[ADF_DCZ] > 0 ? dc->level_min[ADF_DCZ]
                                       : d->default_min;
    adf_shm_view(&load);
    if (load.limited || load.stale) {
        return 0;
    }
    adf_model_rung(load.model, ADF_DCZ, level, r->finfo.size <= ADF_WHOLE_MAX,
                   &cost, &ratio);
    return load.budget >= cost;
}

static const adf_dict_t *lookup(request_rec *r, const adf_accept_t *acc,
                                int *named)
{
    const apr_array_header_t *a = dicts_of(r->server);
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    const char *field, *path = sent_path(r);
    unsigned char hash[ADF_DICT_HASH_LEN];
    int i, versions = versions_here(r, dc);
    adf_req_t *st;

    *named = 0;
    if ((!a && !versions) || !path || !adf_conf_dcz(dc)
        || adf_accept_q(acc, ADF_DCZ) <= 0
        || !(field = apr_table_get(r->headers_in, "Available-Dictionary"))) {
        return NULL;
    }
    /* malformed: no dictionary, as if the field were absent */
    if (adf_sf_binary(field, hash, sizeof(hash)) != 0) {
        return NULL;
    }
    *named = 1;
    /* the answer now depends on them: they go in Vary */
    adf_req(r)->fetch_read = 1;
    if (!adf_dict_fetch_allows(apr_table_get(r->headers_in, "Sec-Fetch-Mode"),
                               apr_table_get(r->headers_in,
                                             "Sec-Fetch-Site"))) {
        return NULL;
    }
    for (i = 0; a && i < a->nelts; i++) {
        const adf_dict_conf_t *d = DICT_AT(a, i);

        if (!memcmp(d->dict.hash, hash, sizeof(hash))
            && adf_dict_pattern_matches(d->match, path)) {
            return may_fetch(r, d) ? &d->dict : NULL;
        }
    }
    /* an earlier version of a static file, as the cache kept it (the
     * client matched the pattern it was given with it), if the client
     * may read the file it was kept from */
    st = adf_req(r);
    if (versions && adf_dict_affordable(r, dc)
        && adf_cache_dict_load(r, dc, hash, st->plain ? st->plain
                                                      : r->filename,
                               &st->dict_kept)) {
        return &st->dict_kept;
    }
    return NULL;
}

const adf_dict_t *adf_dict_for(request_rec *r, const adf_accept_t *acc,
                               int *named)
{
    adf_req_t *st;

    /* Most requests name no dictionary: nothing is looked up or kept.  A
     * subrequest's body is its main request's to code (and one asks
     * whether a dictionary may be used: adf_access_may_read). */
    if (!adf_config_dicts_used() || r->main
        || !apr_table_get(r->headers_in, "Available-Dictionary")) {
        if (named) {
            *named = 0;
        }
        return NULL;
    }
    st = adf_req(r);

    if (!st->dict_looked) {
        st->dict = lookup(r, acc, &st->dict_named);
        st->dict_looked = 1;
    }
    if (named) {
        *named = st->dict_named;
    }
    return st->dict;
}

const adf_dict_t *adf_dict_held(request_rec *r, const adf_accept_t *acc)
{
    return adf_dict_for(r, acc, NULL);
}

void adf_dict_advertise(request_rec *r)
{
    const char *match, *quoted;

    if (!whole(r) || !(match = adf_dict_match(r->pool, sent_path(r)))
        || !(quoted = adf_sf_quote(r->pool, match))) {
        return;
    }
    apr_table_setn(r->headers_out, "Use-As-Dictionary",
                   apr_pstrcat(r->pool, "match=", quoted, NULL));
}
