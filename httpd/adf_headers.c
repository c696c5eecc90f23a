/* Header rules shared by the filter and the sibling path. */
#include "adf_headers.h"
#include "adf_config.h"
#include "adf_negotiate.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include <string.h>
#include <strings.h>

/* One pass over a table for the fields the response's own headers
 * decide on.  A header may come as several lines (Header add, a CGI, a
 * backend): every line counts.  Most responses carry a handful of fields
 * and none of these: a pass costs less than a lookup per field. */
static void scan(const apr_table_t *t, adf_resp_fields_t *h, int length)
{
    const apr_array_header_t *a = apr_table_elts(t);
    const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
    int i;

    for (i = 0; i < a->nelts; i++) {
        const char *k = e[i].key, *v = e[i].val;

        if (!k || !v) {
            continue;
        }
        switch (*k) {
        case 'C':
        case 'c':
            /* mostly one comparison per field: the handler's
             * Content-Length is the usual one */
            if (apr_tolower(k[1]) == 'a') {
                if (!strcasecmp(k, "Cache-Control")) {
                    h->no_transform |= adf_list_has(v, "no-transform");
                }
            }
            else if (length && !h->length && !strcasecmp(k, "Content-Length")) {
                h->length = v;
            }
            else if (!h->encoding && !strcasecmp(k, "Content-Encoding")
                     && adf_is_coding(v)) {
                h->encoding = v;
            }
            break;
        case 'V':
        case 'v':
            if (!strcasecmp(k, "Vary") && h->vary < 2) {
                /* the one this module adds, without the list's parse */
                h->vary = !strcasecmp(v, "Accept-Encoding")
                          || adf_list_has(v, "Accept-Encoding")
                          || adf_list_has(v, "*") ? 2 : 1;
            }
            break;
        }
    }
}

void adf_resp_fields(const request_rec *r, adf_resp_fields_t *h)
{
    memset(h, 0, sizeof(*h));
    scan(r->headers_out, h, 1);
    scan(r->err_headers_out, h, 0);
}

void adf_merge_vary(request_rec *r, const adf_resp_fields_t *h)
{
    if (h->vary == 2) {
        return;
    }
    if (h->vary) {
        apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
    }
    else {
        /* added, not merged: merging would look for a line again */
        apr_table_addn(r->headers_out, "Vary", "Accept-Encoding");
    }
}

void adf_vary_add(request_rec *r, const char *token)
{
    const char *vary = apr_table_get(r->headers_out, "Vary");

    if (!vary || (!adf_list_has(vary, token) && !adf_list_has(vary, "*"))) {
        apr_table_mergen(r->headers_out, "Vary", token);
    }
}

static int no_transform_line(void *found, const char *key, const char *value)
{
    *(int *)found = adf_list_has(value, "no-transform");
    return !*(int *)found;
}

int adf_req_no_transform(const request_rec *r)
{
    int found = 0;

    /* a lookup first: most requests have no Cache-Control */
    if (apr_table_get(r->headers_in, "Cache-Control")) {
        apr_table_do(no_transform_line, &found, r->headers_in,
                     "Cache-Control", NULL);
    }
    return found;
}

int adf_is_coding(const char *ce)
{
    return ce && *ce && strcasecmp(ce, "identity");
}

const char *adf_declared_encoding(const request_rec *r,
                                  const adf_resp_fields_t *h)
{
    return adf_is_coding(r->content_encoding) ? r->content_encoding
                                              : h->encoding;
}

/* Is v a tag (W/ and a quoted string)?  Not one (Header set ETag abc)
 * cannot hold a suffix, and left as it is would name the identity
 * response and this one alike. */
static const char *tag_of(const char *v)
{
    const char *q = !strncmp(v, "W/", 2) ? v + 2 : v;

    return *q == '"' ? q : NULL;
}

/* etag (a tag; q its opening quote) with suffix inside its closing
 * quote: by hand, a formatter costs a thousand instructions. */
static char *suffixed(apr_pool_t *p, const char *etag, const char *q,
                      const char *suffix)
{
    apr_size_t len = strlen(etag), slen = strlen(suffix);
    char *out;

    if (etag + len - 1 > q && etag[len - 1] == '"') {
        len--;
    }
    out = apr_palloc(p, len + slen + 2);
    memcpy(out, etag, len);
    memcpy(out + len, suffix, slen);
    out[len + slen] = '"';
    out[len + slen + 1] = '\0';
    return out;
}

static int is_etag(const apr_table_entry_t *e)
{
    return e->key && (*e->key == 'E' || *e->key == 'e') && e->val
           && !strcasecmp(e->key, "ETag");
}

/* Each tag among t's ETag lines suffixed where it stands (a get and a set
 * would search the table twice, and the set compares every field's
 * name); a line that is no tag is dropped. */
static void suffix_in(request_rec *r, apr_table_t *t, const char *suffix)
{
    const apr_array_header_t *a = apr_table_elts(t);
    apr_table_entry_t *e = (apr_table_entry_t *)a->elts;
    apr_array_header_t *tags;
    const char *q;
    int i, other = 0;

    for (i = 0; i < a->nelts; i++) {
        if (is_etag(&e[i])) {
            if ((q = tag_of(e[i].val))) {
                e[i].val = suffixed(r->pool, e[i].val, q, suffix);
            }
            else {
                other = 1;
            }
        }
    }
    if (!other) {
        return;
    }
    tags = apr_array_make(r->pool, 2, sizeof(char *));
    for (i = 0; i < a->nelts; i++) {
        if (is_etag(&e[i]) && tag_of(e[i].val)) {
            APR_ARRAY_PUSH(tags, char *) = e[i].val;
        }
    }
    apr_table_unset(t, "ETag");
    for (i = 0; i < tags->nelts; i++) {
        apr_table_addn(t, "ETag", APR_ARRAY_IDX(tags, i, char *));
    }
}

/* In both tables: a tag can be in either, and in both (Header always set
 * ETag adds an err_headers_out line to httpd's own), and each goes out. */
void adf_etag_append(request_rec *r, const char *suffix)
{
    suffix_in(r, r->headers_out, suffix);
    suffix_in(r, r->err_headers_out, suffix);
}

const char *adf_stored_etag_suffix(apr_pool_t *p, adf_coding_e c, int cache,
                                   const unsigned char *digest)
{
    const char *cs = adf_coding(c)->etag_suffix;
    const char *kind = cache ? ADF_CACHE_ETAG : ADF_SIBLING_ETAG;
    apr_size_t cl = strlen(cs), kl = strlen(kind);
    char *out = apr_palloc(p, cl + kl + 2 * 8 + 1);

    /* by hand, as every stored response names its bytes */
    memcpy(out, cs, cl);
    memcpy(out + cl, kind, kl);
    adf_digest_hex(out + cl + kl, digest, 8);
    return out;
}

const char *adf_dict_etag_suffix(apr_pool_t *p, const adf_coding_t *d,
                                 const unsigned char *hash)
{
    char hex[2 * 8 + 1];

    adf_digest_hex(hex, hash, 8);
    return apr_pstrcat(p, d->etag_suffix, "-", hex, NULL);
}

/* Strip our on-the-fly suffix from the quoted tags of a conditional
 * header, for the codings this client accepts; a coding made against a
 * dictionary only with the dictionary the client holds now (dict). */
static const char *strip_suffixes(apr_pool_t *p, const char *value,
                                  const adf_accept_t *acc,
                                  const adf_dict_t *dict)
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
                const char *suffix = !d ? NULL
                                   : !d->needs_dict ? d->etag_suffix
                                   : dict ? adf_dict_etag_suffix(p, d,
                                                                 dict->hash)
                                   : NULL;
                apr_size_t sl = suffix ? strlen(suffix) : 0;

                if (sl && adf_accept_q(acc, (adf_coding_e)c) > 0 && len > sl
                    && !memcmp(s + 1 + len - sl, suffix, sl)) {
                    cut = sl;
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

/* Does a conditional header's list name a tag ending in suffix?  strong:
 * If-Match's comparison, which no weak tag passes. */
static int names_stored(const char *value, const char *suffix, int strong)
{
    apr_size_t sl = strlen(suffix);
    const char *s = value;

    while ((s = strchr(s, '"'))) {
        const char *end = strchr(s + 1, '"');
        int weak = s - value >= 2 && !strncmp(s - 2, "W/", 2);

        if (!end) {
            return 0;
        }
        if (!(strong && weak) && (apr_size_t)(end - s - 1) > sl
            && !memcmp(end - sl, suffix, sl)) {
            return 1;
        }
        s = end + 1;
    }
    return 0;
}

/* No tag the handler makes looks like this. */
#define NO_TAG "\"adaptive-deflate:none\""

void adf_match_stored_conditionals(request_rec *r, const char *suffix)
{
    static const char *const hdrs[] = { "If-None-Match", "If-Match" };
    int i;

    for (i = 0; i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, hdrs[i]);

        while (v && apr_isspace(*v)) {
            v++;
        }
        if (v && *v != '*') {
            apr_table_setn(r->headers_in, hdrs[i],
                           names_stored(v, suffix, i == 1) ? "*" : NO_TAG);
        }
    }
}

/* adf_strip_conditionals' work, apart: most requests carry neither
 * header, and pay only for looking. */
static void __attribute__((noinline)) strip_ours(request_rec *r,
                                                 adf_dict_of_fn *dict_of)
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
                           strip_suffixes(r->pool, v, &acc,
                                          dict_of ? dict_of(r, &acc) : NULL));
        }
    }
}

void adf_strip_conditionals(request_rec *r, adf_dict_of_fn *dict_of)
{
    if (apr_table_get(r->headers_in, "If-None-Match")
        || apr_table_get(r->headers_in, "If-Match")) {
        strip_ours(r, dict_of);
    }
}
