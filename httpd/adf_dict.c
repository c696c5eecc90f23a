/* Dictionary transport on httpd's side; see adf_dict.h. */
#include "adf_dict.h"
#include "adf_access.h"
#include "adf_cache.h"
#include "adf_config.h"
#include "adf_dictmatch.h"
#include "adf_request.h"
#include "adf_sf.h"
#include "adf_sampling.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <stdlib.h>
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

/* ---- what using one costs ---------------------------------------------- */

/* A dictionary this much larger than the body (and above the floor) is
 * not prepared for it: preparing costs per byte of the dictionary about
 * what coding costs per byte of the body, so a 2 KB response against
 * 12 MB would cost thousands of times its own coding.  Prepared already
 * (for a larger response, or at start-up: a configured one), it costs
 * the body alone. */
#define ADF_DICT_FAR 16
#define ADF_DICT_FAR_MIN (256 * 1024)
/* A body of unknown length (a dynamic page) is priced as this many
 * bytes. */
#define ADF_DICT_BODY_GUESS (64 * 1024)
/* The memory on-the-fly dcz streams may hold in one process (their
 * window and the tables they copy from the prepared dictionary): a
 * response that would go over gets no dictionary (its client gets the
 * coding it would have had without; a kept delta, stored, costs none). */
#define ADF_DCZ_STREAMS_BYTES (64 * 1024 * 1024)

static volatile apr_uint32_t streams_kb;    /* this process's, in KB */

/* The dcz levels a dictionary of len bytes is used at under dc: the
 * range configured (else the coding's defaults), cut to what its size
 * allows (adf_dict_level_max). */
static void dict_levels(const adf_dir_conf_t *dc, apr_size_t len, int *lo,
                        int *hi)
{
    const adf_coding_t *d = adf_coding(ADF_DCZ);
    int max = adf_dict_level_max(len);

    *lo = dc->level_min[ADF_DCZ] > 0 ? dc->level_min[ADF_DCZ]
                                     : d->default_min;
    *hi = dc->level_max[ADF_DCZ] > 0 ? dc->level_max[ADF_DCZ]
                                     : d->default_max;
    *hi = *hi < max ? *hi : max;
    *lo = *lo < *hi ? *lo : *hi;
}

/* Can the controller afford coding a body of body bytes (-1: unknown)
 * against a dictionary of len bytes at level, with prep ns of preparing
 * it (0: prepared already)?  The whole cost is spread over the body's
 * bytes and set against the budget, as any rung's; never over the CPU
 * limit or without a signal. */
static int affordable(int level, double prep, apr_size_t len,
                      apr_off_t body)
{
    adf_load_view_t load;
    double cost, ratio, n = body > 0 ? (double)body : ADF_DICT_BODY_GUESS;

    if (prep > 0 && len > ADF_DICT_FAR_MIN && len > ADF_DICT_FAR * n) {
        return 0;
    }
    adf_shm_view(&load);
    if (load.limited || load.stale) {
        return 0;
    }
    adf_model_rung(load.model, ADF_DCZ, level,
                   body >= 0 && body <= ADF_WHOLE_MAX, &cost, &ratio);
    return load.budget >= cost + prep / n;
}

/* What a dcz stream of a body of body bytes against dictionary p of len
 * bytes holds, in KB: its window (the body, 8 MB at most, where known;
 * else as much as the dictionary) and the tables it copies. */
static apr_uint32_t stream_kb(apr_size_t len, apr_off_t body,
                              const adf_dict_prep_t *p)
{
    apr_uint64_t w = body >= 0 ? (apr_uint64_t)body : len;

    w = w < 8u << 20 ? w : 8u << 20;
    return (apr_uint32_t)((w + adf_dict_prep_tables(p)) >> 10) + 1;
}

typedef struct {
    adf_dict_prep_t *prep;
    apr_uint32_t kb;
} held_t;

static apr_status_t let_go(void *data)
{
    held_t *h = data;

    apr_atomic_sub32(&streams_kb, h->kb);
    adf_dict_prep_put(h->prep);
    return APR_SUCCESS;
}

/* The kept files (their identities: adf_cache_kept_t's id) this process
 * read and found to hold the bytes they are named for.  A prepared
 * dictionary, or a delta, stands for a kept file only once its bytes
 * were checked: a file damaged or changed since (its identity moves) is
 * read again, found damaged and removed, as if nothing stood for it.
 * Once per file per process, whatever the number of requests. */
#define CHECKED_SLOTS 256
static volatile apr_uint64_t checked_ids[CHECKED_SLOTS];

/* Were k's bytes checked in this process, or are they now (read and
 * hashed: a damaged file is removed)? */
static int checked(request_rec *r, const adf_cache_kept_t *k)
{
    unsigned char *buf;

    if (apr_atomic_read64(&checked_ids[k->id % CHECKED_SLOTS]) == k->id) {
        adf_cache_dict_touch(r, k);
        return 1;
    }
    if (!(buf = adf_cache_dict_read(r, k))) {
        return 0;
    }
    free(buf);
    apr_atomic_set64(&checked_ids[k->id % CHECKED_SLOTS], k->id);
    return 1;
}

/* d prepared at level (0: any) in this process already, at a level of
 * lo..hi that the budget pays for, held; else NULL. */
static adf_dict_prep_t *ready(const adf_dict_t *d, int level, int lo, int hi,
                              apr_off_t body)
{
    adf_dict_prep_t *p = adf_dict_prep_get(d->hash, d->len, level);

    if (p && (adf_dict_prep_level(p) < lo || adf_dict_prep_level(p) > hi
              || !affordable(adf_dict_prep_level(p), 0, d->len, body))) {
        adf_dict_prep_put(p);
        p = NULL;
    }
    return p;
}

/* d prepared now at level, held, if the budget pays for that as well:
 * its bytes are src->data, or k's (read into src->data, which the
 * prepared form then owns).  NULL otherwise. */
static adf_dict_prep_t *prepare(request_rec *r, const adf_dict_t *d,
                                const adf_cache_kept_t *k, adf_dict_t *src,
                                int level, apr_off_t body)
{
    adf_dict_prep_t *p;

    if (!affordable(level, adf_dict_prep_cost(level, d->len), d->len, body)
        || (k && !(src->data = adf_cache_dict_read(r, k)))) {
        return NULL;
    }
    p = adf_dict_prep_make(src, level, k != NULL);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "%s a dictionary of %"
                  APR_SIZE_T_FMT " bytes at level %d", p ? "prepared"
                  : "could not prepare", d->len, level);
    return p;
}

/* Dictionary d (its hash and length; its bytes: d->data, or k's, read
 * only if it is prepared now), prepared at a level r may use it at, into
 * *out for r (held until r->pool goes): the strongest level, prepared
 * before in this process or paid for now; else any level prepared; else
 * the cheapest, paid for now.  0: not used for r (its client gets what
 * it would have without). */
static int take(request_rec *r, const adf_dir_conf_t *dc,
                const adf_dict_t *d, const adf_cache_kept_t *k,
                adf_dict_t *out)
{
    /* a kept version's response is its static file; a configured
     * dictionary's may be anything (r->finfo: a script's) */
    apr_off_t body = k ? r->finfo.size : -1;
    adf_dict_prep_t *p;
    adf_dict_t src = *d;
    held_t *h;
    apr_uint32_t kb;
    int lo, hi;

    dict_levels(dc, d->len, &lo, &hi);
    if (!(p = ready(d, hi, lo, hi, body))
        && !(p = prepare(r, d, k, &src, hi, body))
        && !(p = ready(d, 0, lo, hi, body)) && lo < hi) {
        p = prepare(r, d, k, &src, lo, body);
    }
    if (!p) {
        return 0;
    }

    /* on-the-fly streams' memory, bounded in each process */
    kb = stream_kb(d->len, body, p);
    if (apr_atomic_add32(&streams_kb, kb) + kb
        > (apr_uint32_t)(ADF_DCZ_STREAMS_BYTES >> 10)) {
        apr_atomic_sub32(&streams_kb, kb);
        adf_dict_prep_put(p);
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "no dictionary: this "
                      "process's dcz streams hold their most memory");
        return 0;
    }
    h = apr_palloc(r->pool, sizeof(*h));
    h->prep = p;
    h->kb = kb;
    apr_pool_cleanup_register(r->pool, h, let_go, apr_pool_cleanup_null);
    *out = *d;
    out->data = NULL;   /* the stream codes against the prepared form */
    out->prep = p;
    return 1;
}

static apr_status_t flush_prepared(void *data)
{
    adf_dict_prep_flush();
    return APR_SUCCESS;
}

void adf_dict_post_config(apr_pool_t *pconf, server_rec *s)
{
    const adf_dir_conf_t *dc;
    const apr_array_header_t *a;
    adf_dict_prep_t *p;
    int i, lo, hi;

    /* the last configuration's go (their bytes went with it), and these
     * go with this one's pool (the module may be unloaded) */
    adf_dict_prep_flush();
    apr_pool_cleanup_register(pconf, NULL, flush_prepared,
                              apr_pool_cleanup_null);
    for (; s; s = s->next) {
        dc = ap_get_module_config(s->lookup_defaults,
                                  &adaptive_deflate_module);
        for (i = 0, a = dicts_of(s); a && i < a->nelts; i++) {
            const adf_dict_t *d = &DICT_AT(a, i)->dict;

            dict_levels(dc, d->len, &lo, &hi);
            /* the strongest level, and the cheapest for a loaded server
             * (which could not afford preparing a large one itself) */
            if ((p = adf_dict_prep_make(d, hi, 0))) {
                adf_dict_prep_put(p);   /* the table keeps it */
            }
            if (lo < hi && (p = adf_dict_prep_make(d, lo, 0))) {
                adf_dict_prep_put(p);
            }
        }
    }
}

/* Is r's file's delta against the kept version k in the cache (made
 * once for the pair, and kept: adf_cache_delta_lookup)?  Then st says
 * where, for the swap to serve it as any entry, at a hit's cost, and
 * nothing is prepared or coded.  If not, it is queued for the worker to
 * make.  Only before a swap: r's file is the one the client asked for. */
static int kept_delta(request_rec *r, const adf_dir_conf_t *dc, adf_req_t *st,
                      const adf_cache_kept_t *k)
{
    adf_cache_req_t *cr;

    if (st->sibling || !(cr = adf_cache_for(r, dc))) {
        return 0;
    }
    if (adf_cache_delta_lookup(r, cr, k, &st->delta_path, &st->delta_finfo,
                               &st->delta_fd, &st->delta_held)) {
        st->delta = cr;
        return 1;
    }
    adf_cache_delta_queue(r, cr, k);
    return 0;
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
            st = adf_req(r);
            st->dict_private = 1;
            return may_fetch(r, d) && take(r, dc, &d->dict, NULL,
                                           &st->dict_kept)
                   ? &st->dict_kept : NULL;
        }
    }
    /* an earlier version of a static file, as the cache kept it (the
     * client matched the pattern it was given with it), if the client
     * may read the file it was kept from */
    st = adf_req(r);
    if (versions) {
        adf_cache_kept_t *k = apr_palloc(r->pool, sizeof(*k));
        adf_dict_t d = { NULL };

        if (adf_cache_dict_find(r, dc, hash, st->plain ? st->plain
                                                       : r->filename, k)) {
            if (!checked(r, k)) {
                return NULL;    /* damaged: removed */
            }
            st->kept = k;
            st->dict_private = k->elsewhere;
            if (kept_delta(r, dc, st, k)) {
                return NULL;    /* the swap serves it, stored */
            }
            d.len = k->len;
            memcpy(d.hash, hash, sizeof(hash));
            if (take(r, dc, &d, k, &st->dict_kept)) {
                return &st->dict_kept;
            }
        }
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
    if (!adf_config_dicts_used() || r->main || adf_access_asked(r)
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

int adf_dict_level(const adf_dict_t *dict)
{
    return adf_dict_prep_level(dict->prep);
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
