/* Header rules shared by the filter and the sibling path. */
#include "adf_headers.h"
#include "adf_config.h"
#include "adf_negotiate.h"

#include <apr_strings.h>

#include <string.h>
#include <strings.h>

/* A header may come as several lines (Header add, a CGI, a backend):
 * every line of it counts. */
typedef struct {
    const char *token, *other;  /* other: a second token that counts too */
    int found;
} find_t;

/* Every line of header in t, to fn until it returns 0.  Most responses
 * have none of the headers looked for, and a lookup costs less than
 * apr_table_do's walk. */
static void each_line(const apr_table_t *t, const char *header,
                      apr_table_do_callback_fn_t *fn, void *baton)
{
    if (apr_table_get(t, header)) {
        apr_table_do(fn, baton, t, header, NULL);
    }
}

static int find_token(void *baton, const char *key, const char *value)
{
    find_t *f = baton;

    f->found = adf_list_has(value, f->token)
               || (f->other && adf_list_has(value, f->other));
    return !f->found;
}

static int has2(const apr_table_t *t, const char *header, const char *token,
                const char *other)
{
    find_t f = { token, other, 0 };

    each_line(t, header, find_token, &f);
    return f.found;
}

static int has(const apr_table_t *t, const char *header, const char *token)
{
    return has2(t, header, token, NULL);
}

void adf_merge_vary(request_rec *r)
{
    if (has2(r->headers_out, "Vary", "Accept-Encoding", "*")
        || has2(r->err_headers_out, "Vary", "Accept-Encoding", "*")) {
        return;
    }
    apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
}

int adf_req_no_transform(const request_rec *r)
{
    return has(r->headers_in, "Cache-Control", "no-transform");
}

int adf_resp_no_transform(const request_rec *r)
{
    return has(r->headers_out, "Cache-Control", "no-transform")
           || has(r->err_headers_out, "Cache-Control", "no-transform");
}

int adf_is_coding(const char *ce)
{
    return ce && *ce && strcasecmp(ce, "identity");
}

static int find_coding(void *baton, const char *key, const char *value)
{
    const char **ce = baton;

    if (adf_is_coding(value)) {
        *ce = value;
    }
    return !*ce;
}

const char *adf_header_encoding(const request_rec *r)
{
    const char *ce = NULL;

    each_line(r->headers_out, "Content-Encoding", find_coding, &ce);
    if (!ce) {
        each_line(r->err_headers_out, "Content-Encoding", find_coding, &ce);
    }
    return ce;
}

const char *adf_declared_encoding(const request_rec *r)
{
    return adf_is_coding(r->content_encoding) ? r->content_encoding
                                          : adf_header_encoding(r);
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

void adf_suffix_etag(request_rec *r, adf_coding_e c, int kind)
{
    const char *suffix = adf_coding(c)->etag_suffix;

    if (kind != ADF_ETAG_FLY) {
        suffix = apr_pstrcat(r->pool, suffix, kind == ADF_ETAG_CACHE
                             ? ADF_CACHE_ETAG : ADF_SIBLING_ETAG, NULL);
    }
    if (!suffix_in(r, r->headers_out, suffix)) {
        suffix_in(r, r->err_headers_out, suffix);
    }
}

/* How much of tag (len bytes) is our suffix for a coding: the sibling's,
 * the cache entry's or the on-the-fly one; 0 when it carries none. */
static apr_size_t suffix_len(const char *tag, apr_size_t len,
                             const char *suffix)
{
    static const char *const kinds[] = { ADF_SIBLING_ETAG, ADF_CACHE_ETAG };
    apr_size_t sl = strlen(suffix), pl;
    int i;

    for (i = 0; i < 2; i++) {
        pl = strlen(kinds[i]);
        if (len > sl + pl && !memcmp(tag + len - pl, kinds[i], pl)
            && !memcmp(tag + len - pl - sl, suffix, sl)) {
            return sl + pl;
        }
    }
    if (len > sl && !memcmp(tag + len - sl, suffix, sl)) {
        return sl;
    }
    return 0;
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
            apr_size_t len, cut = 0;
            int c;

            if (!end) {
                break;
            }
            len = end - s - 1;
            for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS && !cut; c++) {
                const adf_coding_t *d = adf_coding((adf_coding_e)c);

                if (d && adf_accept_q(acc, (adf_coding_e)c) > 0) {
                    cut = suffix_len(s + 1, len, d->etag_suffix);
                }
            }
            len -= cut;
            changed |= cut > 0;
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

void adf_strip_conditionals(request_rec *r)
{
    static const char *const hdrs[] = { "If-None-Match", "If-Match" };
    const char *ae = NULL;
    adf_accept_t acc;
    int i;

    for (i = 0; i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, hdrs[i]);
        if (v && strstr(v, "-ad-")) {
            if (!ae) {
                /* a tag of ours without Accept-Encoding: left as sent */
                if (!(ae = apr_table_get(r->headers_in, "Accept-Encoding"))) {
                    return;
                }
                adf_accept_parse(ae, &acc);
            }
            apr_table_setn(r->headers_in, hdrs[i],
                           strip_suffixes(r->pool, v, &acc));
        }
    }
}

int adf_fixup_conditionals(request_rec *r)
{
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);

    /* Elsewhere no tag of ours was handed out (unless the filter is set
     * by hand: adf_insert_filter): the header goes to the handler (a CGI,
     * a proxied backend) exactly as the client sent it. */
    if (adf_conf_enabled(dc) || adf_conf_precompressed(dc)) {
        adf_strip_conditionals(r);
    }
    return DECLINED;
}
