/* Entity tags of this module's representations; see adf_etag.h. */
#include "adf_etag.h"
#include "adf_digest.h"

#include <apr_strings.h>

#include <string.h>

static int is_ows(int c)
{
    return c == ' ' || c == '\t';
}

static int is_hex(const char *s, apr_size_t n)
{
    apr_size_t i;

    for (i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return 0;
        }
    }
    return 1;
}

/* The forms of our suffixes after a coding's own ("-ad-gzip"): what
 * follows it, and how many hex digits of a digest end it. */
static const struct {
    adf_tag_kind_e kind;
    const char *mark;
    apr_size_t hex;
} forms[] = {
    { ADF_TAG_FLY, "", 0 },
    { ADF_TAG_SIBLING, ADF_ETAG_SIBLING, ADF_ETAG_HEX },
    { ADF_TAG_CACHE, ADF_ETAG_CACHE, ADF_ETAG_HEX },
    { ADF_TAG_DICT, "-", ADF_ETAG_HEX },    /* a coding that needs_dict */
};
#define NFORMS (sizeof(forms) / sizeof(forms[0]))

/* The length of the suffix coding cs in form f would end [o, o + len)
 * with, or 0 where it does not. */
static apr_size_t suffix_len(const char *o, apr_size_t len, const char *cs,
                             unsigned f)
{
    apr_size_t cl = strlen(cs), ml = strlen(forms[f].mark);
    apr_size_t n = cl + ml + forms[f].hex;

    if (len <= n || memcmp(o + len - n, cs, cl)
        || memcmp(o + len - n + cl, forms[f].mark, ml)
        || !is_hex(o + len - forms[f].hex, forms[f].hex)) {
        return 0;
    }
    return n;
}

/* Which of our suffixes, if any, ends the opaque tag of t (olen bytes). */
static void classify(adf_tag_t *t, apr_size_t olen)
{
    int c;
    unsigned f;

    t->kind = ADF_TAG_PLAIN;
    t->coding = ADF_IDENTITY;
    t->base_len = olen;
    t->hex = NULL;
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);

        for (f = 0; d && f < NFORMS; f++) {
            apr_size_t n;

            /* a coding against a dictionary is made on the fly only
             * with the dictionary's hash; stored only as a cache entry
             * (a kept delta) */
            if (!(d->needs_dict ? forms[f].kind == ADF_TAG_DICT
                                  || forms[f].kind == ADF_TAG_CACHE
                                : forms[f].kind != ADF_TAG_DICT)
                || !(n = suffix_len(t->opaque, olen, d->etag_suffix, f))) {
                continue;
            }
            t->kind = forms[f].kind;
            t->coding = (adf_coding_e)c;
            t->base_len = olen - n;
            t->hex = forms[f].hex ? t->opaque + olen - forms[f].hex : NULL;
            return;
        }
    }
}

/* Past the rest of a list element, and its comma. */
static const char *next_element(const char *s)
{
    while (*s && *s != ',') {
        s++;
    }
    return *s ? s + 1 : s;
}

int adf_tag_next(const char **sp, adf_tag_t *t)
{
    const char *s = *sp;

    for (;;) {
        const char *q, *end, *after;
        apr_size_t olen;

        while (*s == ',' || is_ows(*s)) {
            s++;
        }
        if (!*s) {
            *sp = s;
            return 0;
        }
        memset(t, 0, sizeof(*t));
        t->text = s;
        if (*s == '*') {
            after = s + 1;
            while (is_ows(*after)) {
                after++;
            }
            if (!*after || *after == ',') {
                t->len = 1;
                t->kind = ADF_TAG_ANY;
                *sp = next_element(after);
                return 1;
            }
            s = next_element(s);
            continue;
        }
        t->weak = s[0] == 'W' && s[1] == '/';
        q = t->weak ? s + 2 : s;
        if (*q != '"') {
            s = next_element(s);    /* a bare word: no tag */
            continue;
        }
        t->opaque = q + 1;
        if ((end = strchr(t->opaque, '"'))) {
            olen = end - t->opaque;
            after = end + 1;
            while (is_ows(*after)) {
                after++;
            }
            if (*after && *after != ',') {
                s = next_element(after);    /* "a"b: no tag */
                continue;
            }
            t->len = end + 1 - s;
            *sp = next_element(after);
        }
        else {
            /* no closing quote (a negotiated tag): to the end */
            olen = strlen(t->opaque);
            while (olen && is_ows(t->opaque[olen - 1])) {
                olen--;
            }
            t->len = t->opaque + olen - s;
            *sp = t->opaque + strlen(t->opaque);
        }
        t->opaque_len = olen;
        classify(t, olen);
        return 1;
    }
}

/* The first 64 bits of a digest as the hex a suffix carries. */
static void digest_hex(char *out, const unsigned char *digest)
{
    adf_digest_hex(out, digest, ADF_ETAG_HEX / 2);
}

int adf_tag_acceptable(const adf_tag_t *t, const adf_tag_now_t *now)
{
    char hex[ADF_ETAG_HEX + 1];
    apr_size_t sl;

    switch (t->kind) {
    case ADF_TAG_PLAIN:
        return adf_accept_q(now->accept, ADF_IDENTITY) > 0;
    case ADF_TAG_FLY:
        return adf_accept_q(now->accept, t->coding) > 0;
    case ADF_TAG_DICT:
        if (!now->dict || adf_accept_q(now->accept, t->coding) <= 0) {
            return 0;
        }
        digest_hex(hex, now->dict);
        return !memcmp(t->hex, hex, ADF_ETAG_HEX);
    case ADF_TAG_SIBLING:
    case ADF_TAG_CACHE:
        sl = now->stored ? strlen(now->stored) : 0;
        return sl && t->opaque_len == t->base_len + sl
               && !memcmp(t->opaque + t->base_len, now->stored, sl);
    default:
        return 0;
    }
}

/* The opaque part of a tag as a handler set it ("abc", W/"abc", or
 * unclosed "abc), or NULL when it is no tag. */
static const char *opaque_of(const char *etag, apr_size_t *len)
{
    const char *q, *end;

    if (!etag) {
        return NULL;
    }
    q = etag[0] == 'W' && etag[1] == '/' ? etag + 2 : etag;
    if (*q++ != '"') {
        return NULL;
    }
    end = strchr(q, '"');
    *len = end ? (apr_size_t)(end - q) : strlen(q);
    return q;
}

int adf_tag_of(const adf_tag_t *t, const char *etag)
{
    const char *o;
    apr_size_t len;

    if (t->kind == ADF_TAG_SIBLING || t->kind == ADF_TAG_CACHE) {
        return 1;
    }
    if (t->kind == ADF_TAG_ANY || !(o = opaque_of(etag, &len))) {
        return 0;
    }
    return len == t->base_len && !memcmp(o, t->opaque, len);
}

/* Does t name what is chosen now (of several held tags, the one a 304
 * should carry)? */
static int names_chosen(const adf_tag_t *t, const adf_tag_now_t *now)
{
    return t->kind == ADF_TAG_SIBLING || t->kind == ADF_TAG_CACHE
           || t->coding == now->chosen;
}

int adf_tag_not_modified(const char *list, const char *etag,
                         const adf_tag_now_t *now, const char **pick,
                         apr_size_t *pick_len)
{
    const char *s = list;
    adf_tag_t t;
    int found = 0;

    *pick = NULL;
    *pick_len = 0;
    while (s && adf_tag_next(&s, &t)) {
        if (t.kind == ADF_TAG_ANY) {
            /* "any current representation": there is one */
            *pick = NULL;
            *pick_len = 0;
            return etag != NULL;
        }
        if (!adf_tag_acceptable(&t, now) || !adf_tag_of(&t, etag)) {
            continue;
        }
        if (!found || names_chosen(&t, now)) {
            *pick = t.text;
            *pick_len = t.len;
        }
        found = 1;
        if (names_chosen(&t, now)) {
            break;
        }
    }
    return found;
}

const char *adf_tag_for_handler(apr_pool_t *p, const char *list,
                                const adf_tag_now_t *now, int strong)
{
    /* each tag kept is no longer than it was, and takes ", " after it */
    char *out = apr_palloc(p, 2 * strlen(list) + sizeof(ADF_ETAG_NONE));
    char *o = out;
    const char *s = list;
    adf_tag_t t;

    while (adf_tag_next(&s, &t)) {
        const char *keep = NULL;
        apr_size_t len = 0;

        if (t.kind == ADF_TAG_ANY) {
            return list;
        }
        if (t.kind == ADF_TAG_SIBLING || t.kind == ADF_TAG_CACHE
            || (t.kind == ADF_TAG_PLAIN && adf_tag_acceptable(&t, now))) {
            keep = t.text;
            len = t.len;
        }
        else if (t.kind != ADF_TAG_PLAIN && !strong
                 && adf_tag_acceptable(&t, now)) {
            keep = t.opaque;
            len = t.base_len;
        }
        if (!keep) {
            continue;
        }
        if (o > out) {
            *o++ = ',';
            *o++ = ' ';
        }
        if (keep == t.opaque) {
            /* the base, closed, as weak as the client's tag was */
            if (t.weak) {
                *o++ = 'W';
                *o++ = '/';
            }
            *o++ = '"';
            memcpy(o, keep, len);
            o += len;
            *o++ = '"';
        }
        else {
            memcpy(o, keep, len);
            o += len;
        }
    }
    if (o == out) {
        return ADF_ETAG_NONE;
    }
    *o = '\0';
    return strcmp(out, list) ? out : list;
}

int adf_tag_range_ok(const char *if_range, const char *etag, int varies)
{
    const char *s = if_range;
    adf_tag_t t;

    if (!if_range) {
        return 1;
    }
    while (is_ows(*s)) {
        s++;
    }
    if (*s != '"' && !(s[0] == 'W' && s[1] == '/')) {
        return !varies;     /* a date */
    }
    if (!adf_tag_next(&s, &t) || t.weak || !etag || etag[0] != '"') {
        return 0;
    }
    return strlen(etag) == t.len && !memcmp(etag, t.text, t.len);
}

const char *adf_fly_etag_suffix(apr_pool_t *p, adf_coding_e c,
                                const unsigned char *dict_hash)
{
    const adf_coding_t *d = adf_coding(c);
    char hex[ADF_ETAG_HEX + 1];

    if (!d->needs_dict || !dict_hash) {
        return d->etag_suffix;
    }
    digest_hex(hex, dict_hash);
    return apr_pstrcat(p, d->etag_suffix, "-", hex, NULL);
}

const char *adf_stored_etag_suffix(apr_pool_t *p, adf_coding_e c, int cache,
                                   const unsigned char *digest)
{
    const char *cs = adf_coding(c)->etag_suffix;
    const char *kind = cache ? ADF_ETAG_CACHE : ADF_ETAG_SIBLING;
    apr_size_t cl = strlen(cs), kl = strlen(kind);
    char *out = apr_palloc(p, cl + kl + ADF_ETAG_HEX + 1);

    /* by hand, as every stored response names its bytes */
    memcpy(out, cs, cl);
    memcpy(out + cl, kind, kl);
    digest_hex(out + cl + kl, digest);
    return out;
}

char *adf_etag_suffixed(apr_pool_t *p, const char *tag, const char *suffix,
                        int weak)
{
    int was_weak = tag[0] == 'W' && tag[1] == '/';
    const char *q = was_weak ? tag + 2 : tag;
    apr_size_t len, slen = strlen(suffix), w;
    char *out, *o;

    if (*q != '"') {
        return NULL;
    }
    /* by hand: a formatter costs a thousand instructions */
    len = strlen(q);
    if (len > 1 && q[len - 1] == '"') {
        len--;
    }
    w = was_weak || weak ? 2 : 0;
    o = out = apr_palloc(p, w + len + slen + 2);
    if (w) {
        *o++ = 'W';
        *o++ = '/';
    }
    memcpy(o, q, len);
    memcpy(o + len, suffix, slen);
    o[len + slen] = '"';
    o[len + slen + 1] = '\0';
    return out;
}
