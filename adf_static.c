/* Precompressed siblings.
 *
 * A sibling F.gz (F.br, ...) is a second path to F's content, so it obeys
 * F's rules everywhere:
 *  - It replaces F only where F itself would go out byte for byte: served
 *    by the default handler, through no filter that transforms content
 *    (SSI, Substitute, ...), for a type this module compresses.  The swap
 *    happens in the last insert_filter hook, once access control, mod_dir
 *    and every module that inserts filters have settled on F.  Only the
 *    bytes change: the default handler then serves the sibling like any
 *    static file, with sendfile, its own length, 304s and ranges over the
 *    sibling's bytes; the filter gives its ETag the coding's suffix, so
 *    no two representations share a strong validator whatever FileETag
 *    says.
 *  - It stands for F only while it provably holds F's current version
 *    (adf_ident.h).
 *  - A direct request for F.gz whose F exists is authorised as F (a
 *    subrequest for F's URI runs F's access rules), and in subrequests
 *    (MultiViews, mod_autoindex, SSI) a sibling is not a resource of its
 *    own: MultiViews negotiates between real variants and the sibling
 *    swap then applies to the one chosen.
 */
#include "adf_static.h"
#include "adf_filter.h"
#include "adf_headers.h"
#include "adf_ident.h"
#include "adf_request.h"
#include "adf_shm.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_hash.h>
#include <http_core.h>
#include <http_request.h>

#include <string.h>
#include <strings.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Filters that pass a precompressed body on unchanged: compressors that
 * step aside for an encoded response, and header-only filters.  Any other
 * filter before the protocol filters may transform F's bytes, and then
 * the sibling (made from the untransformed F) would be wrong. */
static const char *const verbatim_filters[] = {
    ADF_FILTER_NAME, "DEFLATE", "BROTLI_COMPRESS", "FIXUP_HEADERS_OUT",
    "FIXUP_HEADERS_ERR", "MOD_EXPIRES", "BUFFER", "CACHE_SAVE",
    "CACHE_SAVE_SUBREQ", "CACHE_OUT", "CACHE_OUT_SUBREQ",
    "CACHE_REMOVE_URL", "CACHE_INVALIDATE", NULL
};

static int passes_verbatim(const char *name)
{
    int i;

    /* mod_filter's AddOutputFilterByType harness for one filter */
    if (!strncasecmp(name, "BYTYPE:", 7)) {
        name += 7;
    }
    for (i = 0; verbatim_filters[i]; i++) {
        if (!strcasecmp(name, verbatim_filters[i])) {
            return 1;
        }
    }
    return 0;
}

/* Would F go out exactly as it is on disk? */
static int served_verbatim(request_rec *r)
{
    ap_filter_t *f;

    if (r->handler && strcmp(r->handler, "default-handler")) {
        return 0;
    }
    for (f = r->output_filters; f && f->frec->ftype < AP_FTYPE_PROTOCOL;
         f = f->next) {
        if (!passes_verbatim(f->frec->name)) {
            ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "no sibling: "
                          "filter %s may transform %s", f->frec->name,
                          r->filename);
            return 0;
        }
    }
    return 1;
}

static void ident_of(const apr_finfo_t *fi, adf_ident_t *id)
{
    id->dev = (apr_uint64_t)fi->device;
    id->ino = (apr_uint64_t)fi->inode;
    id->size = fi->size;
    id->mtime = adf_ts_from_usec(fi->mtime);
    id->ctime = adf_ts_from_usec(fi->ctime);
}

/* A sibling adaptive-precompress wrote names the source it was made from:
 * a change to the sibling's own inode since (a chmod) cannot make an old
 * sibling look fresh.  Siblings from other tools carry no mark. */
static int mark_matches(const char *path, const adf_ident_t *f)
{
    char v[ADF_MARK_MAX];
    ssize_t n = getxattr(path, ADF_MARK_XATTR, v, sizeof(v));
    apr_int64_t size;
    adf_ts_t mtime;

    if (n < 0) {
        return 1;   /* no mark (ENODATA), or no xattrs here (ENOTSUP) */
    }
    return !adf_mark_parse(v, (apr_size_t)n, &size, &mtime)
           && adf_mark_matches(f, size, &mtime, 1);
}

#define SIBLING_WANTED (APR_FINFO_MIN | APR_FINFO_IDENT | APR_FINFO_OWNER \
                        | APR_FINFO_CTIME)

/* Is the sibling at path usable for F (finfo f)?  Fills *sfi. */
static int usable(request_rec *r, const char *path, const apr_finfo_t *f,
                  apr_finfo_t *sfi, int *stale)
{
    int opts = ap_allow_options(r);
    apr_finfo_t lfi;
    adf_ident_t fid, sid;

    *stale = 0;
    if (apr_stat(&lfi, path, SIBLING_WANTED | APR_FINFO_LINK, r->pool)
        != APR_SUCCESS) {
        return 0;
    }
    if (lfi.filetype == APR_LNK) {
        if (!(opts & (OPT_SYM_LINKS | OPT_SYM_OWNER))) {
            return 0;
        }
        if (apr_stat(sfi, path, SIBLING_WANTED, r->pool) != APR_SUCCESS) {
            return 0;
        }
        if (!(opts & OPT_SYM_LINKS) && lfi.user != sfi->user) {
            return 0;   /* SymLinksIfOwnerMatch, and the owners differ */
        }
    }
    else {
        *sfi = lfi;
    }
    if (sfi->filetype != APR_REG) {
        return 0;
    }
    if (sfi->size == 0 && f->size > 0) {
        return 0;   /* an empty sibling is broken, not compressed */
    }
    ident_of(f, &fid);
    ident_of(sfi, &sid);
    if (!adf_sibling_fresh(&fid, &sid) || !mark_matches(path, &fid)) {
        *stale = 1;
        return 0;
    }
    /* Readable by this process, or the handler would answer 403. */
    return access(path, R_OK) == 0;
}

/* Stale siblings are logged once per process and path: a line per
 * request would flood the log of a busy site.  The table lives in a pool
 * of its own, only ever touched under the lock (pchild is not ours to
 * allocate from in worker threads). */
#define STALE_MAX 4096
static apr_hash_t *stale_seen;
static apr_thread_mutex_t *stale_lock;
static apr_pool_t *stale_pool;

void adf_static_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (apr_pool_create(&stale_pool, pchild) != APR_SUCCESS
        || apr_thread_mutex_create(&stale_lock, APR_THREAD_MUTEX_DEFAULT,
                                   pchild) != APR_SUCCESS) {
        stale_lock = NULL;
        return;
    }
    stale_seen = apr_hash_make(stale_pool);
}

static void log_stale(request_rec *r, const char *path)
{
    int first = 0;

    if (!stale_lock || apr_thread_mutex_lock(stale_lock) != APR_SUCCESS) {
        return;
    }
    if (!apr_hash_get(stale_seen, path, APR_HASH_KEY_STRING)
        && apr_hash_count(stale_seen) < STALE_MAX) {
        apr_hash_set(stale_seen, apr_pstrdup(stale_pool, path),
                     APR_HASH_KEY_STRING, "");
        first = 1;
    }
    apr_thread_mutex_unlock(stale_lock);
    if (first) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, ADFLOGNO(00009)
                      "ignoring %s: it does not hold the current version of "
                      "%s (rewrite it with adaptive-precompress)", path,
                      r->filename);
    }
}

/* Is a usable sibling for coding c there?  Logs and counts stale ones. */
static int sibling(request_rec *r, adf_coding_e c, const char **path,
                   apr_finfo_t *sfi)
{
    int stale;

    *path = apr_pstrcat(r->pool, r->filename, adf_coding(c)->ext, NULL);
    if (usable(r, *path, &r->finfo, sfi, &stale)) {
        return 1;
    }
    if (stale) {
        adf_shm_count_stale();
        log_stale(r, *path);
    }
    return 0;
}

void adf_static_swap(request_rec *r, const adf_dir_conf_t *dc)
{
    adf_policy_conf_t pc;
    adf_policy_in_t in;
    adf_decision_t d;
    adf_accept_t acc;
    adf_coding_e left[ADF_MAX_PREFS];
    int checked[ADF_NCODINGS] = { 0 };
    apr_finfo_t sfi;
    const char *path;
    int i, nleft;
    adf_coding_e c;

    if (r->finfo.filetype != APR_REG || (r->path_info && *r->path_info)
        || r->method_number != M_GET || !served_verbatim(r)) {
        return;
    }
    /* The same rules as on the fly (type, encoded, no-transform, env,
     * proxies, length...), at full effort: only the coding is left. */
    adf_conf_policy(dc, &pc);
    adf_request_facts(r, dc, &acc, &in);
    in.length = r->finfo.size;
    in.effort = 1;
    adf_policy_decide(&pc, &in, &d);
    if (d.coding == ADF_IDENTITY) {
        return;
    }
    /* Look in the order the client prefers (q-values, then ours) and take
     * the first usable sibling: one stat in the common case. */
    memcpy(left, pc.prefs, sizeof(left));
    nleft = pc.nprefs;
    while (nleft && (c = adf_negotiate(&acc, left, nleft)) != ADF_IDENTITY) {
        for (i = 0; left[i] != c; i++) {
        }
        left[i] = left[--nleft];
        checked[c] = 1;
        if (sibling(r, c, &path, &sfi)) {
            ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                          "serving sibling %s", path);
            adf_merge_vary(r);
            r->filename = (char *)path;
            r->finfo = sfi;
            r->content_encoding = adf_coding_name(c);
            adf_req(r)->sibling = c;
            adf_add_filter(r);
            return;
        }
    }
    /* F itself goes out; if any sibling exists, another client would
     * have got it, so the answer varies. */
    for (i = 0; i < pc.nprefs; i++) {
        if (!checked[pc.prefs[i]] && sibling(r, pc.prefs[i], &path, &sfi)) {
            adf_merge_vary(r);
            break;
        }
    }
}

/* The URI of F for a request for F + ext, or NULL. */
static const char *stem_uri(request_rec *r, const char *ext)
{
    apr_size_t ul = strlen(r->uri), el = strlen(ext);

    if (ul <= el || strcmp(r->uri + ul - el, ext)) {
        return NULL;
    }
    return apr_pstrmemdup(r->pool, r->uri, ul - el);
}

int adf_static_guard(request_rec *r)
{
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    const adf_coding_t *cd;
    const char *stem, *uri;
    apr_finfo_t fi;
    request_rec *rr;
    int status;

    if (!adf_conf_precompressed(dc) || r->finfo.filetype != APR_REG
        || !(cd = adf_coding_by_ext(r->filename, strlen(r->filename)))) {
        return DECLINED;
    }
    stem = apr_pstrmemdup(r->pool, r->filename,
                          strlen(r->filename) - strlen(cd->ext));
    if (apr_stat(&fi, stem, APR_FINFO_TYPE, r->pool) != APR_SUCCESS
        || fi.filetype != APR_REG) {
        return DECLINED;    /* a file of its own (an archive), not a sibling */
    }
    if (r->main) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "%s is a sibling of "
                      "%s: not a resource of its own in a subrequest",
                      r->filename, stem);
        return HTTP_NOT_FOUND;
    }
    uri = stem_uri(r, cd->ext);
    rr = uri ? ap_sub_req_lookup_uri(uri, r, NULL)
             : ap_sub_req_lookup_file(stem, r, NULL);
    status = rr->status;
    if (status == HTTP_UNAUTHORIZED) {
        /* F asks for credentials: so does its sibling. */
        apr_table_overlap(r->err_headers_out, rr->err_headers_out,
                          APR_OVERLAP_TABLES_SET);
    }
    ap_destroy_sub_req(rr);
    if (status == HTTP_OK) {
        return DECLINED;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "refusing %s: its file %s "
                  "is refused (%d)", r->filename, stem, status);
    return ap_is_HTTP_CLIENT_ERROR(status) || ap_is_HTTP_SERVER_ERROR(status)
           ? status : HTTP_FORBIDDEN;
}
