/* A client's conditional headers against this module's representations;
 * see adf_conditional.h. */
#include "adf_conditional.h"
#include "adf_request.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include <string.h>

static const char *const conditionals[] = { "If-None-Match", "If-Match" };

/* What the client sent, kept before its first rewrite. */
static void keep_held(request_rec *r, const char *inm)
{
    adf_req_t *st = adf_req(r);

    if (!st->held_kept) {
        st->held_tags = inm;
        st->held_kept = 1;
    }
}

/* adf_cond_for_handler's work, apart: most requests carry neither
 * header, and pay only for looking. */
static void __attribute__((noinline)) for_handler(request_rec *r,
                                                  adf_dict_of_fn *dict_of)
{
    const adf_dict_t *dict;
    adf_tag_now_t now;
    adf_accept_t acc;
    int i, looked = 0;

    adf_accept_parse(apr_table_get(r->headers_in, "Accept-Encoding"), &acc);
    memset(&now, 0, sizeof(now));
    now.accept = &acc;
    for (i = 0; i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, conditionals[i]);
        const char *shown;

        /* no tag of ours, and identity taken: as sent (most are) */
        if (!v || (!strstr(v, "-ad-")
                   && adf_accept_q(&acc, ADF_IDENTITY) > 0)) {
            continue;
        }
        if (!looked) {
            dict = dict_of ? dict_of(r, &acc) : NULL;
            now.dict = dict ? dict->hash : NULL;
            looked = 1;
        }
        shown = adf_tag_for_handler(r->pool, v, &now, i == 1);
        if (shown != v) {
            if (i == 0) {
                keep_held(r, v);
            }
            apr_table_setn(r->headers_in, conditionals[i], shown);
        }
    }
}

void adf_cond_for_handler(request_rec *r, adf_dict_of_fn *dict_of)
{
    if (apr_table_get(r->headers_in, "If-None-Match")
        || apr_table_get(r->headers_in, "If-Match")) {
        for_handler(r, dict_of);
    }
}

/* Does a conditional header's list name a tag ending in suffix?  strong:
 * If-Match's comparison, which no weak tag passes. */
static int names_stored(const char *value, const char *suffix, int strong)
{
    apr_size_t sl = strlen(suffix);
    const char *s = value;
    adf_tag_t t;

    while (adf_tag_next(&s, &t)) {
        if ((t.kind == ADF_TAG_SIBLING || t.kind == ADF_TAG_CACHE)
            && !(strong && t.weak) && t.opaque_len == t.base_len + sl
            && !memcmp(t.opaque + t.base_len, suffix, sl)) {
            return 1;
        }
    }
    return 0;
}

void adf_match_stored_conditionals(request_rec *r, const char *suffix)
{
    int i;

    for (i = 0; i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, conditionals[i]);

        while (v && apr_isspace(*v)) {
            v++;
        }
        if (v && *v != '*') {
            if (i == 0) {
                keep_held(r, v);
            }
            apr_table_setn(r->headers_in, conditionals[i],
                           names_stored(v, suffix, i == 1) ? "*"
                                                           : ADF_ETAG_NONE);
        }
    }
}

const char *adf_cond_held(const request_rec *r)
{
    const adf_req_t *st = adf_req_peek(r);

    return st && st->held_kept ? st->held_tags
                               : apr_table_get(r->headers_in, "If-None-Match");
}

int adf_cond_not_modified(request_rec *r, const adf_tag_now_t *now,
                          const char *etag, const char **tag)
{
    const char *held = adf_cond_held(r), *pick;
    apr_size_t len;

    *tag = NULL;
    if (!held || !adf_tag_not_modified(held, etag, now, &pick, &len)) {
        return 0;
    }
    *tag = pick ? apr_pstrmemdup(r->pool, pick, len) : NULL;
    return 1;
}

int adf_cond_holds(const request_rec *r, const char *tag)
{
    const char *s = adf_cond_held(r);
    apr_size_t len = strlen(tag);
    adf_tag_t t;

    while (s && adf_tag_next(&s, &t)) {
        if (t.len == len && !memcmp(t.text, tag, len)) {
            return 1;
        }
    }
    return 0;
}
