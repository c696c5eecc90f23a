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

static int is_etag(const apr_table_entry_t *e)
{
    return e->key && (*e->key == 'E' || *e->key == 'e') && e->val
           && !strcasecmp(e->key, "ETag");
}

/* Each tag among t's ETag lines suffixed where it stands (a get and a set
 * would search the table twice, and the set compares every field's
 * name); a line that is no tag is dropped. */
static void suffix_in(request_rec *r, apr_table_t *t, const char *suffix,
                      int weak)
{
    const apr_array_header_t *a = apr_table_elts(t);
    apr_table_entry_t *e = (apr_table_entry_t *)a->elts;
    apr_array_header_t *tags;
    char *tag;
    int i, other = 0;

    for (i = 0; i < a->nelts; i++) {
        if (is_etag(&e[i])) {
            if ((tag = adf_etag_suffixed(r->pool, e[i].val, suffix, weak))) {
                e[i].val = tag;
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
        /* the tags (W/ and a quoted string), suffixed above */
        if (is_etag(&e[i]) && (*e[i].val == '"'
                               || !strncmp(e[i].val, "W/\"", 3))) {
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
void adf_etag_append(request_rec *r, const char *suffix, int weak)
{
    suffix_in(r, r->headers_out, suffix, weak);
    suffix_in(r, r->err_headers_out, suffix, weak);
}

const char *adf_etag_of(const request_rec *r)
{
    const char *etag = apr_table_get(r->headers_out, "ETag");

    return etag ? etag : apr_table_get(r->err_headers_out, "ETag");
}

void adf_etag_set(request_rec *r, const char *tag)
{
    apr_table_unset(r->err_headers_out, "ETag");
    apr_table_setn(r->headers_out, "ETag", tag);
}

/* Cache-Control's value v without "public" and "s-maxage" (quoted
 * strings kept whole), with "private": NULL where it is that already. */
static const char *private_of(apr_pool_t *p, const char *v)
{
    /* (", " may stand where a bare "," did) */
    char *out = apr_palloc(p, 2 * strlen(v) + sizeof(", private"));
    char *o = out;
    const char *s = v;
    int has = 0, changed = 0;

    while (*s) {
        const char *b, *e;
        int q = 0;
        apr_size_t n;

        while (*s == ',' || apr_isspace(*s)) {
            s++;
        }
        for (b = e = s; *e && (q || *e != ','); e++) {
            if (*e == '"' && (e == b || e[-1] != '\\')) {
                q = !q;
            }
        }
        s = e;
        for (n = e - b; n && apr_isspace(b[n - 1]); n--) {
        }
        if (!n) {
            continue;
        }
        if ((n == 6 && !strncasecmp(b, "public", 6))
            || (n >= 8 && !strncasecmp(b, "s-maxage", 8)
                && (n == 8 || b[8] == '=' || apr_isspace(b[8])))) {
            changed = 1;
            continue;
        }
        has |= n == 7 && !strncasecmp(b, "private", 7);
        if (o > out) {
            *o++ = ',';
            *o++ = ' ';
        }
        memcpy(o, b, n);
        o += n;
    }
    if (has && !changed) {
        return NULL;
    }
    if (!has) {
        strcpy(o, o > out ? ", private" : "private");
    }
    else {
        *o = '\0';
    }
    return out;
}

static int private_in(void *data, const char *key, const char *val)
{
    apr_array_header_t *vals = data;

    (void)key;
    APR_ARRAY_PUSH(vals, const char *) = val;
    return 1;
}

/* t's Cache-Control lines as one, private_of; where t has none, "private"
 * if add. */
static void make_private(apr_pool_t *p, apr_table_t *t, int add)
{
    apr_array_header_t *vals = apr_array_make(p, 2, sizeof(const char *));
    const char *v;

    apr_table_do(private_in, vals, t, "Cache-Control", NULL);
    if (!vals->nelts) {
        if (add) {
            apr_table_setn(t, "Cache-Control", "private");
        }
        return;
    }
    v = apr_array_pstrcat(p, vals, ',');
    if ((v = private_of(p, v))) {
        apr_table_setn(t, "Cache-Control", v);
    }
}

void adf_private_to_client(request_rec *r)
{
    /* "Header always" lines live in err_headers_out: both go out */
    make_private(r->pool, r->err_headers_out, 0);
    make_private(r->pool, r->headers_out,
                 !apr_table_get(r->err_headers_out, "Cache-Control"));
}
