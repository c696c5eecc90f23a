/* Precompressed siblings.
 *
 * The swap happens in a late fixup, after access control and mod_dir have
 * decided on F: only the bytes served change, never who may see them.
 * The default handler then serves the sibling like any static file, with
 * sendfile, its own Content-Length, an ETag of its own (its inode, size
 * and mtime differ from F's), 304s and ranges over the sibling's bytes.
 * F's Content-Type (charset included) stays, since mod_mime already typed
 * the request from F's name.
 */
#include "adf_static.h"
#include "adf_config.h"
#include "adf_filter.h"
#include "adf_shm.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_hash.h>
#include <http_core.h>
#include <http_request.h>

#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const sibling_ext[ADF_NCODINGS] = { NULL, ".gz", ".br" };

/* Is the sibling at path usable for F (finfo f)?  Fills *sfi. */
static int usable(request_rec *r, const char *path, const apr_finfo_t *f,
                  apr_finfo_t *sfi, int *stale)
{
    int opts = ap_allow_options(r);
    apr_finfo_t lfi;

    *stale = 0;
    if (apr_stat(&lfi, path, APR_FINFO_MIN | APR_FINFO_IDENT | APR_FINFO_LINK
                 | APR_FINFO_OWNER,
                 r->pool) != APR_SUCCESS) {
        return 0;
    }
    if (lfi.filetype == APR_LNK) {
        if (!(opts & (OPT_SYM_LINKS | OPT_SYM_OWNER))) {
            return 0;
        }
        if (apr_stat(sfi, path, APR_FINFO_MIN | APR_FINFO_IDENT
                     | APR_FINFO_OWNER, r->pool)
            != APR_SUCCESS) {
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
    /* To the second: many tools (brotli, cp -p on some systems) copy only
     * whole seconds of the original's mtime to the sibling. */
    if (apr_time_sec(sfi->mtime) < apr_time_sec(f->mtime)) {
        *stale = 1;
        return 0;
    }
    /* Readable by this process, or the handler would answer 403. */
    return access(path, R_OK) == 0;
}

/* Stale siblings are logged once per process and path: an info line per
 * request would flood the log of a busy site. */
static apr_hash_t *stale_seen;
static apr_thread_mutex_t *stale_lock;
static apr_pool_t *stale_pool;

void adf_static_child_init(apr_pool_t *pchild, server_rec *s)
{
    stale_pool = pchild;
    stale_seen = apr_hash_make(pchild);
    if (apr_thread_mutex_create(&stale_lock, APR_THREAD_MUTEX_DEFAULT,
                                pchild) != APR_SUCCESS) {
        stale_lock = NULL;
    }
}

static void log_stale(request_rec *r, const char *path)
{
    int first = 0;

    if (!stale_lock || apr_thread_mutex_lock(stale_lock) != APR_SUCCESS) {
        return;
    }
    if (!apr_hash_get(stale_seen, path, APR_HASH_KEY_STRING)
        && apr_hash_count(stale_seen) < 4096) {
        apr_hash_set(stale_seen, apr_pstrdup(stale_pool, path),
                     APR_HASH_KEY_STRING, "");
        first = 1;
    }
    apr_thread_mutex_unlock(stale_lock);
    if (first) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, ADFLOGNO(00009)
                      "ignoring %s: older than the file it stands for", path);
    }
}

/* Is a usable sibling for coding c there?  Logs and counts stale ones. */
static int sibling(request_rec *r, adf_coding_e c, const char **path,
                   apr_finfo_t *sfi)
{
    int stale;

    *path = apr_pstrcat(r->pool, r->filename, sibling_ext[c], NULL);
    if (usable(r, *path, &r->finfo, sfi, &stale)) {
        return 1;
    }
    if (stale) {
        adf_shm_count_stale();
        log_stale(r, *path);
    }
    return 0;
}

int adf_static_fixup(request_rec *r)
{
    adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                              &adaptive_deflate_module);
    adf_policy_conf_t pc;
    adf_accept_t acc;
    adf_coding_e left[ADF_MAX_PREFS];
    int checked[ADF_NCODINGS] = { 0 };
    apr_finfo_t sfi;
    const char *path;
    int i, nleft;
    adf_coding_e c;

    if (!adf_conf_precompressed(dc) || r->main
        || r->finfo.filetype != APR_REG || (r->path_info && *r->path_info)
        || (r->method_number != M_GET)
        || (r->handler && strcmp(r->handler, "default-handler"))
        || r->content_encoding) {
        return DECLINED;
    }
    adf_conf_policy(dc, &pc);
    memcpy(left, pc.prefs, sizeof(left));
    nleft = pc.nprefs;
    /* Look in the order the client prefers (q-values, then ours) and take
     * the first usable sibling: one stat in the common case. */
    adf_accept_parse(adf_no_transform(r->headers_in) ? NULL
                     : apr_table_get(r->headers_in, "Accept-Encoding"), &acc);
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
            adf_shm_count_sibling(c);
            apr_table_setn(r->notes, ADF_NOTE_PREFIX "coding",
                           adf_coding_name(c));
            apr_table_setn(r->notes, ADF_NOTE_PREFIX "reason",
                           "precompressed");
            apr_table_setn(r->notes, ADF_NOTE_PREFIX "level", "-");
            return DECLINED;
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
    return DECLINED;
}
