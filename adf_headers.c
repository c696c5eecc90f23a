/* Header rules shared by the filter and the sibling path. */
#include "adf_headers.h"
#include "adf_config.h"
#include "adf_negotiate.h"

#include <apr_strings.h>

#include <string.h>
#include <strings.h>

void adf_merge_vary(request_rec *r)
{
    const char *v1 = apr_table_get(r->headers_out, "Vary");
    const char *v2 = apr_table_get(r->err_headers_out, "Vary");

    if (adf_list_has(v1, "Accept-Encoding") || adf_list_has(v1, "*")
        || adf_list_has(v2, "Accept-Encoding") || adf_list_has(v2, "*")) {
        return;
    }
    apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
}

static int no_transform(const apr_table_t *t)
{
    return adf_list_has(apr_table_get(t, "Cache-Control"), "no-transform");
}

int adf_req_no_transform(const request_rec *r)
{
    return no_transform(r->headers_in);
}

int adf_resp_no_transform(const request_rec *r)
{
    return no_transform(r->headers_out)
           || no_transform(r->err_headers_out);
}

static int is_coding(const char *ce)
{
    return ce && *ce && strcasecmp(ce, "identity");
}

const char *adf_declared_encoding(const request_rec *r)
{
    const char *ce = r->content_encoding;

    if (!is_coding(ce)) {
        ce = apr_table_get(r->headers_out, "Content-Encoding");
    }
    if (!is_coding(ce)) {
        ce = apr_table_get(r->err_headers_out, "Content-Encoding");
    }
    return is_coding(ce) ? ce : NULL;
}

static int suffix_in(request_rec *r, apr_table_t *t, const char *suffix)
{
    const char *etag = apr_table_get(t, "ETag");
    apr_size_t len;

    if (!etag) {
        return 0;
    }
    if ((len = strlen(etag)) >= 2 && etag[len - 1] == '"') {
        apr_table_setn(t, "ETag", apr_psprintf(r->pool, "%.*s%s\"",
                                               (int)(len - 1), etag, suffix));
    }
    return 1;
}

void adf_suffix_etag(request_rec *r, adf_coding_e c)
{
    const char *suffix = adf_coding(c)->etag_suffix;

    if (!suffix_in(r, r->headers_out, suffix)) {
        suffix_in(r, r->err_headers_out, suffix);
    }
}

/* Strip our suffixes inside the quoted tags of a conditional header, for
 * the codings this client accepts. */
static const char *strip_suffixes(apr_pool_t *p, const char *value,
                                  const adf_accept_t *acc)
{
    char *out = apr_palloc(p, strlen(value) + 1), *o = out;
    const char *s = value;
    int changed = 0;

    while (*s) {
        if (*s == '"') {
            const char *end = strchr(s + 1, '"');
            apr_size_t len;
            int c;

            if (!end) {
                break;
            }
            len = end - s - 1;
            for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
                const adf_coding_t *d = adf_coding((adf_coding_e)c);
                apr_size_t sl = d ? strlen(d->etag_suffix) : 0;

                if (d && adf_accept_q(acc, (adf_coding_e)c) > 0 && len > sl
                    && !memcmp(end - sl, d->etag_suffix, sl)) {
                    len -= sl;
                    changed = 1;
                    break;
                }
            }
            *o++ = '"';
            memcpy(o, s + 1, len);
            o += len;
            *o++ = '"';
            s = end + 1;
        }
        else {
            *o++ = *s++;
        }
    }
    if (!changed) {
        return value;
    }
    strcpy(o, s);
    return out;
}

int adf_fixup_conditionals(request_rec *r)
{
    static const char *const hdrs[] = { "If-None-Match", "If-Match" };
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    const char *ae = apr_table_get(r->headers_in, "Accept-Encoding");
    adf_accept_t acc;
    int i, parsed = 0;

    /* Elsewhere no tag of ours was handed out: the header goes to the
     * handler (a CGI, a proxied backend) exactly as the client sent it. */
    if (!ae || (!adf_conf_enabled(dc) && !adf_conf_precompressed(dc))) {
        return DECLINED;
    }
    for (i = 0; i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, hdrs[i]);
        if (v && strchr(v, '-')) {
            if (!parsed) {
                adf_accept_parse(ae, &acc);
                parsed = 1;
            }
            apr_table_setn(r->headers_in, hdrs[i],
                           strip_suffixes(r->pool, v, &acc));
        }
    }
    return DECLINED;
}
