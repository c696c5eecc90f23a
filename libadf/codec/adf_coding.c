/* The registry of codings: their descriptors by id, token and extension,
 * and the orders the module uses them in (adf_coding.h). */
#include "config.h"
#include "adf_codec_impl.h"

#include <string.h>
#include <strings.h>

#define ADF_CODING_DECL(id, name, directive) \
    extern const adf_coding_t adf_coding_##name;
ADF_CODINGS(ADF_CODING_DECL)
#undef ADF_CODING_DECL

static const adf_coding_t *const registry[ADF_NCODINGS] = {
    NULL,
#define ADF_CODING_REF(id, name, directive) &adf_coding_##name,
    ADF_CODINGS(ADF_CODING_REF)
#undef ADF_CODING_REF
};

static const char *const directives[ADF_NCODINGS] = {
    NULL,
#define ADF_CODING_DIRECTIVE(id, name, directive) directive,
    ADF_CODINGS(ADF_CODING_DIRECTIVE)
#undef ADF_CODING_DIRECTIVE
};

const adf_coding_t *adf_coding(adf_coding_e c)
{
    const adf_coding_t *d = (unsigned)c < ADF_NCODINGS ? registry[c] : NULL;

    return d && d->codec ? d : NULL;
}

const char *adf_coding_directive(adf_coding_e c)
{
    return (unsigned)c < ADF_NCODINGS ? directives[c] : NULL;
}

static int token_eq(const char *name, const char *tok, apr_size_t len)
{
    return name && strlen(name) == len && !strncasecmp(name, tok, len);
}

const adf_coding_t *adf_coding_by_token(const char *token, apr_size_t len)
{
    int c;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);

        if (d && (token_eq(d->token, token, len)
                  || token_eq(d->alias, token, len))) {
            return d;
        }
    }
    return NULL;
}

/* Asked of every file httpd serves: the name's last byte rules out most
 * names (a bit per byte value, mod 64, for the last byte of each built
 * coding's extension), then its last dot, found once, before any
 * extension is compared (every extension is a dot and a few letters). */
#define ADF_MAX_EXT 8
#define EXT_BIT(ch) ((apr_uint64_t)1 << ((unsigned char)(ch) & 63))

static apr_uint64_t ext_ends;

static apr_uint64_t ends_of_exts(void)
{
    apr_uint64_t m = 0;
    int c;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);

        if (d && d->ext && *d->ext) {
            m |= EXT_BIT(d->ext[strlen(d->ext) - 1]);
        }
    }
    return m;
}

void adf_coding_init(void)
{
    ext_ends = ends_of_exts();
}

/* adf_coding_by_ext past the last byte's test, apart: the names it
 * rules out do not pay for this one's frame. */
static const adf_coding_t * __attribute__((noinline))
by_last_dot(const char *path, apr_size_t len)
{
    const char *dot = path + len;
    int c;

    while (dot > path && path + len - dot < ADF_MAX_EXT && dot[-1] != '.') {
        dot--;
    }
    if (dot - 1 <= path || dot[-1] != '.') {
        return NULL;    /* no extension, or nothing before it */
    }
    /* The registry read in place: a call per coding cost more than the
     * rest of a name that is no sibling's. */
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = registry[c];

        if (d && d->codec && d->ext && d->ext[1] == *dot
            && !strcmp(d->ext, dot - 1)) {
            return d;
        }
    }
    return NULL;
}

const adf_coding_t *adf_coding_by_ext(const char *path, apr_size_t len)
{
    if (!len || !((ext_ends ? ext_ends : ends_of_exts())
                  & EXT_BIT(path[len - 1]))) {
        return NULL;
    }
    return by_last_dot(path, len);
}

const char *adf_coding_name(adf_coding_e c)
{
    const adf_coding_t *d = adf_coding(c);

    return d ? d->token : NULL;
}

/* The built codings whose key (rank or cache_rank) is positive, ordered
 * by it, but for those that need a dictionary: a dictionary decides them,
 * not an order. */
static int ordered(adf_coding_e *out, int cache)
{
    int c, n = 0, i;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);
        int key = !d ? 0 : cache ? d->cache_rank : d->rank;

        if (key <= 0 || d->needs_dict) {
            continue;
        }
        /* insertion: a handful of codings */
        for (i = n; i > 0 && (cache ? registry[out[i - 1]]->cache_rank
                                    : registry[out[i - 1]]->rank) > key;
             i--) {
            out[i] = out[i - 1];
        }
        out[i] = (adf_coding_e)c;
        n++;
    }
    return n;
}

int adf_coding_prefs(adf_coding_e *out)
{
    return ordered(out, 0);
}

int adf_coding_cache_order(adf_coding_e *out)
{
    return ordered(out, 1);
}

/* Here, not with the streams: asking a coding which backend it would pick
 * is the registry's business, and keeps the streams' file below the
 * backends that use it. */
int adf_codec_prior(adf_coding_e coding, int level, int whole, double *cost,
                    double *ratio)
{
    const adf_coding_t *d = adf_coding(coding);
    const adf_backend_t *b;
    int bl;

    if (!d || level < d->min_level || level > d->max_level) {
        return -1;
    }
    b = d->codec->pick(level, whole ? 0 : -1, whole ? ADF_STREAM_WHOLE : 0,
                       &bl);
    if (bl < b->prior_min || bl > b->prior_max) {
        return -1;
    }
    *cost = b->prior[bl - b->prior_min].cost;
    *ratio = b->prior[bl - b->prior_min].ratio;
    return 0;
}
