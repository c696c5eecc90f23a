/* Precompressed siblings.
 *
 * A sibling F.gz (F.br, ...) is a second path to F's content, so it obeys
 * F's rules everywhere:
 *  - It replaces F only where F itself would go out byte for byte: served
 *    by the default handler, through no filter that transforms content
 *    (SSI, Substitute, mod_charset_lite, ...) or stores it (mod_cache, whose
 *    entry would carry F's validators), for a type this module compresses,
 *    under the same rules as on-the-fly compression.  The swap happens in
 *    the filter's init function, once every module has inserted its
 *    filters and before the handler runs.  Only the bytes change: the
 *    sibling goes out as the default handler sends any static file (by a
 *    handler of ours in its place, from the descriptor the checks read),
 *    with sendfile, its own length, 304s and ranges over its bytes;
 *    the filter gives its ETag a suffix of its own, so no two
 *    representations share a strong validator whatever FileETag says.
 *  - It stands for F only while it provably holds F's current version:
 *    adaptive-precompress marked it with F's identity (adf_ident.h) and F
 *    is still that inode, size, mtime and ctime.
 *  - The compressed cache (adf_cache.c) answers through the same swap,
 *    under the same rules, with its entry for F where no sibling does.
 *  - Where precompressed serving applies to F, F.gz is not a resource of
 *    its own: a direct request for it (or a subrequest: MultiViews,
 *    mod_autoindex, SSI) is not found; nor, anywhere, is a file that
 *    adaptive-precompress marked.  Authorising it "as F" instead
 *    cannot replay every rule that protects F (main-request-only rules,
 *    path info, filters that F's bytes always pass through).
 */
#include "adf_static.h"
#include "adf_cache.h"
#include "adf_conditional.h"
#include "adf_dict.h"
#include "adf_headers.h"
#include "adf_ident.h"
#include "adf_request.h"
#include "adf_counters.h"
#include "adf_memo.h"
#include "adf_held.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_hash.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* ADAPTIVE_DEFLATE_NAME (restore_name, below) */
static ap_filter_rec_t *name_frec;

/* Filters that pass a precompressed body on unchanged: compressors that
 * step aside for an encoded response, and header-only filters.  Any other
 * filter before the protocol filters may transform F's bytes, and then
 * the sibling (made from the untransformed F) would be wrong. */
static const char *const verbatim_filters[] = {
    ADF_FILTER_NAME, "DEFLATE", "BROTLI_COMPRESS", "FIXUP_HEADERS_OUT",
    "FIXUP_HEADERS_ERR", "MOD_EXPIRES", "BUFFER", NULL
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

typedef enum {
    MARK_OK,            /* names F as it is */
    MARK_NONE,          /* no mark: nobody vouched for this sibling */
    MARK_OTHER,         /* names another version of F */
    MARK_FOREIGN,       /* on a file F's owner did not write */
    MARK_REWRITTEN      /* names F, on bytes written since */
} mark_e;

/* The proof that a sibling holds F's current bytes: the mark
 * adaptive-precompress leaves on what it wrote or verified (adf_ident.h).
 * digest: what names the sibling's bytes in its ETag, the SHA-256 in the
 * mark, or for an earlier release's mark, without one, that of the mark
 * and the sibling's length (unique to F's version and the sibling). */
static mark_e mark_of(int fd, const adf_ident_t *f, apr_off_t size,
                      unsigned char *digest)
{
    char v[ADF_MARK_MAX], len[24];
    ssize_t n = fgetxattr(fd, ADF_MARK_XATTR, v, sizeof(v));
    adf_digest_t dg;
    adf_mark_t m;

    if (n < 0) {
        return MARK_NONE;   /* ENODATA, or no xattrs here (ENOTSUP) */
    }
    if (adf_mark_parse(v, (apr_size_t)n, &m) || !adf_mark_matches(f, &m, 1)) {
        return MARK_OTHER;
    }
    if (m.has_digest) {
        memcpy(digest, m.digest, ADF_DIGEST_LEN);
        return MARK_OK;
    }
    apr_snprintf(len, sizeof(len), " %" APR_OFF_T_FMT, size);
    if (adf_digest_init(&dg) != 0) {
        return MARK_OTHER;
    }
    adf_digest_update(&dg, v, (apr_size_t)n);
    adf_digest_update(&dg, len, strlen(len));
    return adf_digest_final(&dg, digest) ? MARK_OTHER : MARK_OK;
}

#define SIBLING_WANTED (APR_FINFO_MIN | APR_FINFO_IDENT | APR_FINFO_OWNER)

/* What open_sibling found open: the file's identity to the nanosecond,
 * and its mount's number, never reused (0: this kernel has none). */
typedef struct {
    adf_ident_t id;
    apr_uint64_t mnt;
} opened_t;

/* What is open on fd: its type and *o.  -1 if it cannot be told. */
static int identify(int fd, mode_t *mode, opened_t *o)
{
    struct statx sx;
    struct stat st;

    if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID_UNIQUE,
              &sx) == 0) {
        *mode = sx.stx_mode;
        adf_held_ident(&sx, &o->id, &o->mnt);
        return 0;
    }
    /* a sandbox that knows no statx (ENOSYS, or a filter's EPERM) */
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    *mode = st.st_mode;
    adf_ident_of_stat(&o->id, &st);
    o->mnt = 0;
    return 0;
}

/* The sibling sfi names, opened (held by the request) and still that file
 * as it was: what is checked is what the handler sends, whatever is
 * renamed over the path meanwhile.  NULL if it cannot be read or changed. */
static const int *open_sibling(request_rec *r, const char *path,
                               const apr_finfo_t *sfi, int link,
                               opened_t *o)
{
    mode_t mode;
    int fd;

    /* not a FIFO's open that waits, should one take the name now */
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK
                         | (link ? 0 : O_NOFOLLOW))) < 0) {
        return NULL;
    }
    if (identify(fd, &mode, o) != 0 || !S_ISREG(mode)
        || (apr_ino_t)o->id.ino != sfi->inode
        || (apr_dev_t)o->id.dev != sfi->device
        || (apr_off_t)o->id.size != sfi->size
        || apr_time_from_sec(o->id.mtime.sec) + o->id.mtime.nsec / 1000
           != sfi->mtime) {
        close(fd);
        return NULL;
    }
    return adf_req_hold_fd(r, fd);
}

/* mark_of, remembered by the child for the sibling as it is (o): any
 * change to it (a mark set or removed, bytes written, a rename or a
 * link) moves its ctime.  Only a ctime of nanoseconds (a whole second
 * comes again when the wall clock is stepped back, and may be an image
 * builder's normalised time), once settled (adf_ident_settled: a mark
 * removed within the same tick, the tool's undo when F changes under
 * it, would keep it), on a filesystem known to move it
 * (adf_fs_ctime_proven), through a mount the kernel numbers for good (a
 * cloned image remounted on the same loop device has the same device
 * number and identities). */
static mark_e mark_remembered(int fd, const opened_t *o,
                              const adf_ident_t *f, unsigned char *digest,
                              int *vouched)
{
    struct timespec clock;
    struct statfs fs;
    adf_memo_t m;
    adf_ts_t now;
    mark_e mark;

    *vouched = 0;
    if (o->mnt && adf_memo_get(&o->id, o->mnt, f, ADF_MEMO_MARK, &m)) {
        memcpy(digest, m.digest, ADF_DIGEST_LEN);
        *vouched = 1;
        return MARK_OK;
    }
    if ((mark = mark_of(fd, f, (apr_off_t)o->id.size, digest)) != MARK_OK) {
        return mark;
    }
    clock_gettime(CLOCK_REALTIME_COARSE, &clock);
    now.sec = clock.tv_sec;
    now.nsec = clock.tv_nsec;
    if (o->mnt && o->id.ctime.nsec && adf_ident_settled(&o->id, &now)
        && fstatfs(fd, &fs) == 0
        && adf_fs_ctime_proven((long)fs.f_type)) {
        memset(&m, 0, sizeof(m));
        m.length = (apr_off_t)o->id.size;
        memcpy(m.digest, digest, ADF_DIGEST_LEN);
        adf_memo_put(&o->id, o->mnt, f, ADF_MEMO_MARK, &m);
        *vouched = 1;
    }
    return MARK_OK;
}

/* Is the sibling at path usable for F (finfo f)?  Fills *sfi, digest and
 * either *heldp (the child holds it: adf_held.h) or *fdp (it, open);
 * *mark tells why a regular file is not. */
static int usable(request_rec *r, const char *path, const apr_finfo_t *f,
                  apr_finfo_t *sfi, mark_e *mark, unsigned char *digest,
                  const int **fdp, const adf_held_t **heldp)
{
    int opts = ap_allow_options(r), hold, vouched;
    apr_finfo_t lfi;
    adf_ident_t fid;
    opened_t o;

    *mark = MARK_OK;
    *fdp = NULL;
    *heldp = NULL;
    if (adf_held_stat(AT_FDCWD, path, &lfi, &o.id, &o.mnt, r->pool)
        != APR_SUCCESS) {
        return 0;
    }
    adf_ident_of_finfo(&fid, f);
    /* Still the file it was when checked for F as F is: every check below
     * passed on this file then, and would again. */
    hold = lfi.filetype == APR_REG && o.mnt && adf_held_may(r);
    if (hold && (*heldp = adf_held_get(r, path, &o.id, o.mnt, &fid,
                                       ADF_MEMO_MARK))) {
        *sfi = lfi;
        memcpy(digest, adf_held_found(*heldp)->digest, ADF_DIGEST_LEN);
        return 1;
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
    /* A mark is an extended attribute whoever writes the file may set: in
     * a directory others may write (a sticky /tmp-like one), another
     * user's file would stand for F.  F's owner or root wrote ours. */
    if (sfi->user != f->user && sfi->user != 0) {
        *mark = MARK_FOREIGN;
        return 0;
    }
    /* Opened by this process: readable, or the handler would answer 403. */
    if (!(*fdp = open_sibling(r, path, sfi, lfi.filetype == APR_LNK, &o))) {
        return 0;
    }
    if ((*mark = mark_remembered(**fdp, &o, &fid, digest, &vouched))
        != MARK_OK) {
        adf_req_let_go(r, *fdp);
        return 0;
    }
    /* The mark vouches for the bytes the tool wrote, and the tool gives
     * them F's mtime: bytes written over since (the inode and its mark
     * kept: "cat > F.br", a compressor truncating in place) have another
     * one, and would go out under the mark's digest. */
    if (sfi->mtime != f->mtime) {
        *mark = MARK_REWRITTEN;
        adf_req_let_go(r, *fdp);
        return 0;
    }
    /* Held where its identity vouches for the mark as the memo's does
     * (mark_remembered): o is what is open, and a later request's path
     * must name it, unchanged, to be sent it. */
    if (hold && vouched) {
        adf_memo_t m;

        memset(&m, 0, sizeof(m));
        m.length = sfi->size;
        memcpy(m.digest, digest, ADF_DIGEST_LEN);
        adf_held_put(path, **fdp, &o.id, o.mnt, &fid, ADF_MEMO_MARK, &m);
    }
    return 1;
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

static void log_stale(request_rec *r, const char *path, mark_e mark)
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
                      "ignoring %s: %s %s (run adaptive-precompress)", path,
                      mark == MARK_NONE ? "no mark shows that it holds"
                      : mark == MARK_FOREIGN ? "it is owned by neither root "
                                               "nor the owner of"
                      : mark == MARK_REWRITTEN ? "it was written over after "
                                                 "its mark, which names"
                      : "its mark names another version of", r->filename);
    }
}

/* Is a usable sibling for coding c there?  Logs and counts stale ones. */
static int sibling(request_rec *r, adf_coding_e c, const char **path,
                   apr_finfo_t *sfi, unsigned char *digest, const int **fdp,
                   const adf_held_t **heldp)
{
    const char *ext = adf_coding(c)->ext;
    apr_size_t n = strlen(r->filename), e = strlen(ext);
    char *name = apr_palloc(r->pool, n + e + 1);
    mark_e mark;

    /* by hand: apr_pstrcat's two passes over its arguments cost some
     * 230 instructions a request */
    memcpy(name, r->filename, n);
    memcpy(name + n, ext, e + 1);
    *path = name;
    if (usable(r, *path, &r->finfo, sfi, &mark, digest, fdp, heldp)) {
        return 1;
    }
    if (mark != MARK_OK) {
        adf_shm_count_stale();
        log_stale(r, *path, mark);
    }
    return 0;
}

/* Serve the stored bytes at path (sfi; open on fd, or held) in coding
 * c in place of F: a sibling, or (cache not NULL) a cache entry, whose
 * bytes' SHA-256 is digest. */
static void swap_to(request_rec *r, adf_coding_e c, adf_cache_req_t *cache,
                    const char *path, const apr_finfo_t *sfi, const int *fd,
                    const adf_held_t *held, const unsigned char *digest)
{
    adf_req_t *st = adf_req(r);

    /* These bytes, and no others, under one tag: what the client names in
     * its conditionals is judged here, for the handler to find. */
    st->etag_suffix = adf_stored_etag_suffix(r->pool, c, cache != NULL,
                                             digest);
    adf_match_stored_conditionals(r, st->etag_suffix);

    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "serving %s %s",
                  cache ? "cache entry" : "sibling", path);
    st->vary = 1;
    st->plain = r->filename;
    st->plain_finfo = r->finfo;
    st->sibling = c;
    st->cache_hit = cache != NULL;
    st->cache = cache;
    st->stored_fd = fd;
    st->held = held;
    st->stored_name = path;
    r->filename = (char *)path;
    r->finfo = *sfi;
    r->content_encoding = adf_coding_name(c);
    ap_add_output_filter_handle(name_frec, NULL, r, r->connection);
}

void adf_static_swap(request_rec *r, const adf_dir_conf_t *dc)
{
    int pre = adf_conf_precompressed(dc);
    adf_cache_req_t *cache;
    adf_policy_conf_t pc;
    adf_policy_in_t in;
    adf_resp_fields_t h;
    adf_decision_t d;
    adf_accept_t acc;
    adf_coding_e left[ADF_MAX_PREFS];
    const adf_dict_t *dict;
    int checked[ADF_NCODINGS] = { 0 };
    unsigned char digest[ADF_DIGEST_LEN];
    apr_finfo_t sfi;
    const char *path;
    const int *fd;
    const adf_held_t *held = NULL;
    int i, nleft, hit = 0, first = 1;
    adf_coding_e c;

    if (r->finfo.filetype != APR_REG || (r->path_info && *r->path_info)
        || r->method_number != M_GET || !served_verbatim(r)) {
        return;
    }
    cache = adf_cache_for(r, dc);
    if (!pre && !cache) {
        return;
    }
    /* The same rules as on the fly (type, encoded, no-transform, env,
     * proxies, length...), at full effort: only the coding is left. */
    adf_conf_policy(dc, &pc);
    adf_request_facts(r, dc, &acc, &in, &h);
    in.length = r->finfo.size;
    in.coding_only = 1;
    adf_policy_decide(&pc, &in, &d);
    if (d.coding == ADF_IDENTITY && !d.vary) {
        return;     /* no request could have a sibling here */
    }
    /* Kept as a dictionary, its version is advertised on whatever bytes
     * carry it (a sibling, an entry, F itself) */
    if (cache && adf_conf_dict_versions(dc) && adf_coding(ADF_DCZ)) {
        adf_req(r)->version_kept = adf_cache_version_kept(r, cache);
    }
    /* A client that holds a dictionary for this response gets it coded
     * against that (on the fly), not stored bytes, while the controller
     * can afford it (adf_dict_for prices it). */
    dict = d.coding != ADF_IDENTITY && adf_conf_length_hiding(dc) <= 0
           ? adf_dict_for(r, &acc, NULL) : NULL;
    if (adf_req(r)->delta) {
        /* its delta against the dictionary the client holds, kept */
        adf_req_t *st = adf_req(r);

        swap_to(r, ADF_DCZ, st->delta, st->delta_path, &st->delta_finfo,
                st->delta_fd, st->delta_held, adf_cache_digest(st->delta));
        return;
    }
    adf_req(r)->dict_over_stored = dict != NULL;
    /* Look in the order the client prefers (q-values, then ours) and take
     * the first usable sibling, else cache entry: one stat in the common
     * case. */
    memcpy(left, pc.prefs, sizeof(left));
    nleft = d.coding == ADF_IDENTITY ? 0 : pc.nprefs;
    while (nleft && (c = adf_negotiate(&acc, left, nleft)) != ADF_IDENTITY) {
        for (i = 0; left[i] != c; i++) {
        }
        left[i] = left[--nleft];
        /* The cache answers in the client's first choice only: a lower
         * one that happens to be cached would win over the q-values, and
         * the first choice would never be made. */
        if ((pre && !dict
             && sibling(r, c, &path, &sfi, digest, &fd, &held))
            || (cache && first
                && (hit = adf_cache_lookup(r, cache, c, &path, &sfi,
                                           &fd, &held)))) {
            if (dict) {
                /* the entry said what it could: no swap */
                if (hit && fd) {
                    adf_req_let_go(r, fd);
                }
                return;
            }
            swap_to(r, c, hit ? cache : NULL, path, &sfi, fd, held,
                    hit ? adf_cache_digest(cache) : digest);
            return;
        }
        checked[c] = 1;
        first = 0;
    }
    if (cache && d.coding != ADF_IDENTITY) {
        adf_req_t *st = adf_req(r);

        st->miss = cache;
        for (i = 0; i < pc.nprefs; i++) {
            st->miss_codings |= 1u << pc.prefs[i];
        }
    }
    /* F itself goes out; if any sibling exists, another client would
     * have got it, so the answer varies. */
    for (i = 0; pre && i < pc.nprefs; i++) {
        if (!checked[pc.prefs[i]]
            && sibling(r, pc.prefs[i], &path, &sfi, digest, &fd, &held)) {
            if (fd) {
                adf_req_let_go(r, fd);
            }
            adf_req(r)->vary = 1;
            break;
        }
    }
}

/* F's name back, as soon as the handler has the sibling (or the entry) open
 * in its file bucket: what runs after the handler (mod_headers' conditions
 * on %{REQUEST_FILENAME}, %f in logs, mod_lua) is about F, not the file
 * that stands for it. A resource filter: before mod_headers' fixup. */
static apr_status_t restore_name(ap_filter_t *f, apr_bucket_brigade *bb)
{
    adf_req_t *st = adf_req_peek(f->r);

    if (st && st->sibling && st->plain) {
        f->r->filename = (char *)st->plain;
        f->r->finfo = st->plain_finfo;
    }
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

/* A sibling or a cache entry, sent from the descriptor its check opened
 * (or a held sibling from the child's mapping of it, adf_held.h):
 * what the default handler does for a GET of a file, without opening it
 * again by name (a sibling renamed over between the check and the open
 * would go out under the checked one's length and tag; a cache hit
 * reopening its entry through /proc/self/fd took 66 us of CPU, 58
 * without: bench/run --only cache --setups hit, ADF_MODULE each
 * build).  It runs just before the default handler, once every other
 * handler has declined, and leaves it a request whose file a module
 * changed after the swap.  (ContentDigest never applies: restore_name,
 * a resource filter, is first in the chain.) */
static int __attribute__((noinline)) send_checked(request_rec *r,
                                                  const adf_req_t *st)
{
    core_dir_config *d = ap_get_core_module_config(r->per_dir_config);
    apr_bucket_brigade *bb;
    apr_bucket *e;
    apr_file_t *file;
    apr_os_file_t fd;
    apr_status_t rv;
    int status;

    ap_allow_standard_methods(r, MERGE_ALLOW, M_GET, M_OPTIONS, M_POST, -1);
    if ((status = ap_discard_request_body(r)) != OK) {
        return status;
    }
    ap_update_mtime(r, r->finfo.mtime);
    ap_set_last_modified(r);
    if (st->held) {
        ap_set_etag(r);     /* (never FileETag Digest: adf_held_may) */
    }
    else {
        /* no cleanup of its own: the check's closes the descriptor with
         * r->pool, which lives until the response's last byte is
         * written */
        fd = *st->stored_fd;
        apr_os_file_put(&file, &fd, APR_FOPEN_READ | APR_FOPEN_BINARY
                                    | AP_SENDFILE_ENABLED(d->enable_sendfile),
                        r->pool);
        ap_set_etag_fd(r, file);
    }
    ap_set_accept_ranges(r);
    ap_set_content_length(r, r->finfo.size);
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    if ((status = ap_meets_conditions(r)) != OK) {
        r->status = status;
    }
    else if (st->held) {
        APR_BRIGADE_INSERT_TAIL(bb, adf_held_bucket(st->held,
                                                    bb->bucket_alloc));
    }
    else {
        e = apr_brigade_insert_file(bb, file, 0, r->finfo.size, r->pool);
#if APR_HAS_MMAP
        if (d->enable_mmap == ENABLE_MMAP_OFF) {
            apr_bucket_file_enable_mmap(e, 0);
        }
#endif
    }
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection
                                                      ->bucket_alloc));
    rv = ap_pass_brigade(r->output_filters, bb);
    apr_brigade_cleanup(bb);
    /* A client gone mid-way is no error of the server's (logged as the
     * status sent, no ErrorDocument 500), as with the default handler. */
    if (rv == APR_SUCCESS || r->status != HTTP_OK
        || r->connection->aborted) {
        return OK;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, rv, r, ADFLOGNO(00031)
                  "%s of %s not sent", r->filename, r->uri);
    return HTTP_INTERNAL_SERVER_ERROR;
}

int adf_static_handler(request_rec *r)
{
    const adf_req_t *st = adf_req_peek(r);

    /* apart from send_checked: every request asks, few are ours */
    if (!st || st->sibling == ADF_IDENTITY || (!st->stored_fd && !st->held)
        || r->method_number != M_GET || r->finfo.filetype != APR_REG
        || strcmp(r->filename, st->stored_name)) {
        return DECLINED;
    }
    return send_checked(r, st);
}

void adf_static_register(void)
{
    name_frec = ap_register_output_filter("ADAPTIVE_DEFLATE_NAME",
                                          restore_name, NULL,
                                          AP_FTYPE_RESOURCE);
}

/* The URI of F for a request for F + ext, or NULL. */
static const char *stem_uri(request_rec *r, const char *ext)
{
    apr_size_t ul = strlen(r->uri), el = strlen(ext);

    if ((r->path_info && *r->path_info) || ul <= el
        || strcmp(r->uri + ul - el, ext)) {
        return NULL;
    }
    return apr_pstrmemdup(r->pool, r->uri, ul - el);
}

/* Does precompressed serving apply to F?  F's own configuration says:
 * the sibling's may differ (<Files>, <FilesMatch> scopes). */
static int precompressed_for(request_rec *r, const char *stem,
                             const adf_coding_t *cd)
{
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    const char *uri;
    request_rec *rr;
    int on;

    if (adf_conf_precompressed(dc)) {
        return 1;
    }
    uri = stem_uri(r, cd->ext);
    rr = uri ? ap_sub_req_lookup_uri(uri, r, NULL)
             : ap_sub_req_lookup_file(stem, r, NULL);
    on = adf_conf_precompressed(ap_get_module_config(
                                    rr->per_dir_config,
                                    &adaptive_deflate_module));
    ap_destroy_sub_req(rr);
    return on;
}

apr_status_t adf_static_unswap(request_rec *r, apr_bucket_brigade *bb,
                               int keep_encoding)
{
    adf_req_t *st = adf_req(r);
    apr_bucket_brigade *plain;
    apr_bucket *e, *next;
    apr_file_t *fd;
    apr_status_t rv;

    rv = apr_file_open(&fd, st->plain, APR_READ | APR_BINARY, 0, r->pool);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* The default handler sent the sibling whole, before its EOS. */
    for (e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb); e = next) {
        next = APR_BUCKET_NEXT(e);
        if (!APR_BUCKET_IS_METADATA(e)) {
            apr_bucket_delete(e);
        }
    }
    if (r->status == HTTP_OK && !r->header_only) {
        plain = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        apr_brigade_insert_file(plain, fd, 0, st->plain_finfo.size, r->pool);
        APR_BRIGADE_PREPEND(bb, plain);
    }
    r->filename = (char *)st->plain;
    r->finfo = st->plain_finfo;
    r->content_encoding = NULL;
    if (!keep_encoding) {
        apr_table_unset(r->headers_out, "Content-Encoding");
    }
    ap_set_content_length(r, st->plain_finfo.size);
    ap_set_etag(r);
    st->sibling = ADF_IDENTITY;
    st->cache_hit = 0;
    return APR_SUCCESS;
}

/* adf_static_guard for a file named as a coding's: apart, so that every
 * other request pays for the name's test alone. */
static int __attribute__((noinline)) guard(request_rec *r,
                                           const adf_coding_t *cd,
                                           apr_size_t len)
{
    const char *stem;
    apr_finfo_t fi;

    stem = apr_pstrmemdup(r->pool, r->filename, len - strlen(cd->ext));
    /* A file adaptive-precompress marked is a sibling wherever it is
     * reached from (an Alias, another vhost, outside a <Location> that
     * turns siblings on), and so is any F.gz where F's siblings are
     * served. */
    if (getxattr(r->filename, ADF_MARK_XATTR, NULL, 0) < 0
        && (!adf_config_precompressed_used()
            || apr_stat(&fi, stem, APR_FINFO_TYPE, r->pool) != APR_SUCCESS
            || fi.filetype != APR_REG || !precompressed_for(r, stem, cd))) {
        return DECLINED;    /* a file of its own (an archive), not a sibling */
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "%s is a sibling of %s: "
                  "only served as an encoding of it", r->filename, stem);
    return HTTP_NOT_FOUND;
}

int adf_static_guard(request_rec *r)
{
    const adf_coding_t *cd;
    apr_size_t len;

    if (r->finfo.filetype != APR_REG
        || !(cd = adf_coding_by_ext(r->filename,
                                    len = strlen(r->filename)))) {
        return DECLINED;
    }
    return guard(r, cd, len);
}
