/* The compressed cache: configuration checks, the shared segment (its
 * queue and lock: adf_cache_queue.c) and counters, and what a request does (look an entry up, note the outcome,
 * queue its file).  The worker that fills the cache is adf_cache_worker.c;
 * the file format adf_cache_entry.h.
 *
 * Lookups need no shared index: an entry's name follows from the source's
 * identity, so a request stats one file per coding it tries.  Each child
 * checks an entry's trailer and CRC the first time it serves it and then
 * remembers the file (device, inode, size, mtime, ctime) as good.
 */
#include "adf_cache_queue.h"
#include "adf_access.h"
#include "adf_safedir.h"
#include "adf_dictmatch.h"
#include "adf_children.h"
#include "adf_retained.h"
#include "adf_sampling.h"
#include "adf_request.h"
#include "adf_memo.h"
#include "adf_held.h"

#include <apr_atomic.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <mod_status.h>
#include <unixd.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ADF_CACHE_RETAINED "mod_adaptive_deflate:cache"

struct adf_cache_req_t {
    int index;                  /* the cache directory */
    adf_ident_t key;            /* r's file */
    apr_uint64_t hash;
    unsigned char digest[ADF_DIGEST_LEN];   /* of the entry found */
    unsigned char source[ADF_DIGEST_LEN];   /* ... of the file it holds */
};

static adf_cache_gen_t *gen;

apr_off_t adf_cache_file_max(apr_off_t max)
{
    return max / 4 < ADF_CACHE_FILE_MAX ? max / 4 : ADF_CACHE_FILE_MAX;
}

/* ---- configuration -------------------------------------------------------- */

/* Entries are reached through the directory's descriptor, opened once:
 * the request path opens an entry with openat() and hands the default
 * handler "/proc/self/fd/N", a name for the open file itself.  Nothing
 * follows the configured path after start-up, and an entry the worker
 * evicts a moment after a request opened it is still served whole. */
static const char *fd_path(apr_pool_t *p, int fd)
{
    return apr_psprintf(p, "/proc/self/fd/%d", fd);
}

typedef struct {
    int fd;
} probe_t;

static const char *probe_dir(void *baton, apr_pool_t *p)
{
    probe_t *pr = baton;
    char buf[120];
    int fd;

    if (faccessat(pr->fd, ".", W_OK | X_OK, 0) != 0) {
        return apr_pstrdup(p, apr_strerror(APR_FROM_OS_ERROR(errno), buf,
                                           sizeof(buf)));
    }
    /* what requests will open entries through, as the children's user */
    if ((fd = open(fd_path(p, pr->fd), O_RDONLY | O_DIRECTORY
                                             | O_CLOEXEC)) < 0) {
        return apr_psprintf(p, "cannot reach it through %s (%s): is /proc "
                            "mounted%s?", fd_path(p, pr->fd),
                            apr_strerror(APR_FROM_OS_ERROR(errno), buf,
                                         sizeof(buf)),
                            ap_unixd_config.chroot_dir ? " inside ChrootDir"
                                                       : "");
    }
    close(fd);
    return NULL;
}

/* adf_safedir_open for the children's user. */
static int open_dir(const char *dir, apr_pool_t *p, const char **err)
{
    adf_dirowner_t o;

    o.uid = adf_children_uid();
    o.gid = adf_children_gid();
    o.user = adf_children_user();
    return adf_safedir_open(dir, &o, p, err);
}

/* Its device and inode, "dev:ino": one directory under two names (a
 * link) is one cache. */
static const char *dir_key(apr_pool_t *p, int fd)
{
    struct stat st;

    return fstat(fd, &st) ? "" : apr_psprintf(p, "%lu:%lu",
                                              (unsigned long)st.st_dev,
                                              (unsigned long)st.st_ino);
}

/* What is wrong with a cache directory, or NULL; *key names the
 * directory it is (dir_key). */
static const char *check_dir(const char *dir, apr_pool_t *p,
                             const char **key)
{
    const char *err;
    probe_t pr;

    *key = NULL;
    if ((pr.fd = open_dir(dir, p, &err)) < 0) {
        return err;
    }
    *key = dir_key(p, pr.fd);
    if ((err = adf_as_children(probe_dir, &pr, p)) != NULL) {
        err = apr_psprintf(p, "%s cannot write in it: %s",
                           adf_children_user(), err);
    }
    close(pr.fd);
    return err;
}

/* Is a is b or a directory above it? */
static int holds(const char *a, const char *b)
{
    apr_size_t n = strlen(a);

    return !strncmp(a, b, n) && (b[n] == '/' || !b[n] || !strcmp(a, "/"));
}

/* A cache directory that holds a DocumentRoot would hide the site: the
 * cache's files are no resources (adf_cache_guard). */
static const char *holds_a_site(server_rec *s, const char *dir)
{
    for (; s; s = s->next) {
        const core_server_config *core = ap_get_core_module_config(
                                             s->module_config);

        if (core->ap_document_root && holds(dir, core->ap_document_root)) {
            return core->ap_document_root;
        }
    }
    return NULL;
}

/* Retained once a configuration ran: a restart signalled to the parent
 * (SIGUSR1, SIGHUP, apache2 -k graceful), which reads the configuration
 * again. */
#define ADF_CACHE_RAN "adaptive_deflate_cache_ran"

/* Every server's cache in dir off (its directory went away meanwhile). */
static void without_cache(server_rec *s, const char *dir)
{
    for (; s; s = s->next) {
        adf_srv_conf_t *sc = ap_get_module_config(s->module_config,
                                                  &adaptive_deflate_module);

        if (sc->cache && !strcmp(sc->cache->dir, dir)) {
            sc->cache = NULL;
        }
    }
}

/* Is this process apache2 -k stop (or graceful-stop)?  check_config runs
 * in it before the signal is sent: a cache directory that went away must
 * not keep a running server from being stopped.  httpd keeps the -k
 * argument to itself; the command line still has it. */
static int stopping(apr_pool_t *p)
{
    char buf[4096];
    apr_size_t n = 0;
    const char *a, *prev = "";
    apr_file_t *f;

    if (apr_file_open(&f, "/proc/self/cmdline", APR_READ, 0, p)
        != APR_SUCCESS) {
        return 0;
    }
    apr_file_read_full(f, buf, sizeof(buf) - 1, &n);
    apr_file_close(f);
    buf[n] = '\0';
    for (a = buf; a < buf + n; a += strlen(a) + 1) {
        const char *k = !strcmp(prev, "-k") ? a
                        : !strncmp(a, "-k", 2) && a[2] ? a + 2 : NULL;

        if (k && (!strcmp(k, "stop") || !strcmp(k, "graceful-stop"))) {
            return 1;
        }
        prev = a;
    }
    return 0;
}

int adf_cache_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                           apr_pool_t *ptemp, server_rec *s)
{
    apr_hash_t *seen = apr_hash_make(ptemp);
    int restart = ap_retained_data_get(ADF_CACHE_RAN) != NULL;
    int stop = stopping(ptemp);
    const char *site;
    server_rec *v;

    for (v = s; v; v = v->next) {
        const adf_srv_conf_t *sc = ap_get_module_config(
                                       v->module_config,
                                       &adaptive_deflate_module);
        const adf_cache_conf_t *cc = sc->cache, *other;
        const char *err = NULL, *key;

        if (!cc) {
            continue;
        }
        if ((site = holds_a_site(s, cc->dir))) {
            err = apr_psprintf(ptemp, "holds the DocumentRoot %s", site);
        }
        else if (stop) {
            continue;
        }
        else if ((err = check_dir(cc->dir, ptemp, &key)) && restart) {
            /* The directory went away (rm -rf, tmpfiles) while the
             * server ran, and the parent reads the configuration again
             * (a signal: SIGUSR1, SIGHUP): a reload must not take the
             * site down. */
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, ADFLOGNO(00028)
                         "AdaptiveDeflateCache %s (%s): %s; going on "
                         "without this cache until a restart finds the "
                         "directory usable", cc->dir, cc->at, err);
            without_cache(s, cc->dir);
            continue;
        }
        else if (!err && (other = apr_hash_get(seen, key,
                                               APR_HASH_KEY_STRING))) {
            if (other->max != cc->max) {
                err = apr_psprintf(ptemp, "a second size for this directory "
                                   "(the first: %s, as %s)", other->at,
                                   other->dir);
            }
        }
        else if (!err) {
            apr_hash_set(seen, key, APR_HASH_KEY_STRING, cc);
        }
        if (err) {
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                         ADFLOGNO(00017) "AdaptiveDeflateCache %s (%s): %s",
                         cc->dir, cc->at, err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return OK;
}

static apr_uint64_t dir_hash(const char *dir, apr_off_t max)
{
    apr_uint64_t h = APR_UINT64_C(14695981039346656037);

    for (; *dir; dir++) {
        h = (h ^ (unsigned char)*dir) * APR_UINT64_C(1099511628211);
    }
    return h ^ (apr_uint64_t)max;
}

/* The segment, kept in retained data: a graceful restart keeps the
 * counters of the directories still configured; a full restart clears
 * everything.  The queue starts empty either way. */
static adf_cache_shared_t *attach(server_rec *s)
{
    adf_cache_shared_t *sh;
    apr_status_t rv;
    int i, j, fresh;

    sh = adf_retained_shm(s, ADF_CACHE_RETAINED, sizeof(*sh), &fresh, &rv);
    if (!sh) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, ADFLOGNO(00018)
                     "cannot create the compressed cache's shared "
                     "segment: the cache is off");
        return NULL;
    }
    if (fresh) {
        memset(sh, 0, sizeof(*sh));
        adf_cache_lock_init(sh);
    }
    for (i = 0; i < ADF_CACHE_DIRS; i++) {
        apr_uint64_t h = i < gen->n ? dir_hash(gen->dir[i].conf->dir,
                                               gen->dir[i].conf->max) : 0;

        /* Counters follow their directory, wherever it is now listed. */
        for (j = i; h && j < ADF_CACHE_DIRS && sh->counts[j].dir_hash != h;
             j++) {
        }
        if (!h) {
            j = ADF_CACHE_DIRS;
        }
        if (j == ADF_CACHE_DIRS) {
            memset(&sh->counts[i], 0, sizeof(sh->counts[i]));
        }
        else if (j != i) {
            adf_cache_counts_t t = sh->counts[i];

            sh->counts[i] = sh->counts[j];
            sh->counts[j] = t;
        }
        sh->counts[i].dir_hash = h;
        sh->counts[i].counted = 0;
    }
    if (adf_cache_lock(sh) == 0) {
        sh->count = 0;
        sh->busy = 0;
        sh->running = 0;
        sh->vcount = 0;
        sh->vbusy = 0;
        adf_cache_unlock(sh);
    }
    apr_atomic_set32(&sh->generation, gen->generation);
    return sh;
}

static apr_status_t forget_gen(void *data)
{
    adf_cache_gen_t *g = data;
    int i;

    for (i = 0; i < g->n; i++) {
        if (g->dir[i].fd >= 0) {
            close(g->dir[i].fd);
        }
    }
    gen = NULL;
    return APR_SUCCESS;
}

int adf_cache_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s)
{
    adf_cache_gen_t *g;
    const char *err;
    server_rec *v;
    struct stat st;
    int i, fd;

    gen = NULL;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    if (!ap_retained_data_get(ADF_CACHE_RAN)) {
        ap_retained_data_create(ADF_CACHE_RAN, 1);
    }
    g = apr_pcalloc(pconf, sizeof(*g));
    apr_pool_cleanup_register(pconf, g, forget_gen, apr_pool_cleanup_null);
    g->s = s;
    g->generation = (apr_uint32_t)ap_state_query(AP_SQ_CONFIG_GEN);
    for (v = s; v; v = v->next) {
        const adf_srv_conf_t *sc = ap_get_module_config(
                                       v->module_config,
                                       &adaptive_deflate_module);
        adf_cache_conf_t *cc = sc->cache;

        if (!cc) {
            continue;
        }
        if ((fd = open_dir(cc->dir, ptemp, &err)) < 0) {
            /* changed since check_config looked */
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, ADFLOGNO(00028)
                         "AdaptiveDeflateCache %s (%s): %s; going on "
                         "without this cache until a restart finds the "
                         "directory usable", cc->dir, cc->at, err);
            cc->index = -1;
            continue;
        }
        /* one directory under two names is one cache */
        fstat(fd, &st);
        for (i = 0; i < g->n && (g->dir[i].dev != (apr_uint64_t)st.st_dev
                                 || g->dir[i].ino != (apr_uint64_t)st.st_ino);
             i++) {
        }
        if (i < g->n) {
            close(fd);
        }
        else if (i == ADF_CACHE_DIRS) {
            close(fd);
            ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                         ADFLOGNO(00019) "AdaptiveDeflateCache %s (%s): "
                         "more than %d cache directories", cc->dir, cc->at,
                         ADF_CACHE_DIRS);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        else {
            g->dir[i].conf = cc;
            g->dir[i].fd = fd;
            g->dir[i].dev = (apr_uint64_t)st.st_dev;
            g->dir[i].ino = (apr_uint64_t)st.st_ino;
            g->n++;
        }
        cc->index = i;
    }
    if (!g->n) {
        return OK;
    }
    gen = g;
    if (!(g->sh = attach(s))) {
        gen = NULL;
        return OK;
    }
    for (i = 0; i < g->n; i++) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, ADFLOGNO(00020)
                     "compressed cache %s, up to %" APR_OFF_T_FMT " bytes",
                     g->dir[i].conf->dir, g->dir[i].conf->max);
    }
    adf_cache_worker_start(g, pconf);
    return OK;
}

/* The children's user, who owns every entry: a system call on every hit
 * otherwise (glibc does not keep it). */
static uid_t entry_owner;

void adf_cache_child_init(apr_pool_t *pchild, server_rec *s)
{
    entry_owner = geteuid();
    if (gen) {
        adf_cache_worker_child_init(pchild);
    }
}

/* ---- requests --------------------------------------------------------------- */

int adf_cache_applies(request_rec *r, const adf_dir_conf_t *dc)
{
    const adf_srv_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                    &adaptive_deflate_module);

    return gen && sc->cache && sc->cache->index >= 0 && adf_conf_cache(dc)
           && adf_conf_enabled(dc);
}

adf_cache_req_t *adf_cache_for(request_rec *r, const adf_dir_conf_t *dc)
{
    const adf_srv_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                    &adaptive_deflate_module);
    adf_cache_req_t *cr;

    if (!adf_cache_applies(r, dc) || r->finfo.filetype != APR_REG
        || r->finfo.size > adf_cache_file_max(sc->cache->max)
        || strlen(r->filename) >= ADF_CACHE_PATH) {
        return NULL;
    }
    cr = apr_palloc(r->pool, sizeof(*cr));
    cr->index = sc->cache->index;
    adf_ident_of_finfo(&cr->key, &r->finfo);
    cr->hash = adf_cache_key_hash(&cr->key);
    return cr;
}

/* Why the entry open on fd (fi) is not a whole entry of cr's file in
 * coding c; NULL when it is, with *m what was checked.  *keep: it is not
 * damaged, only of no use now (it holds another source: two keys, one
 * hash; or it could not be read); *old: an earlier release's entry. */
static const char *check_entry(const adf_cache_req_t *cr, adf_coding_e c,
                               const unsigned char *dict, int fd,
                               const apr_finfo_t *fi, adf_memo_t *m,
                               int *keep, int *old)
{
    unsigned char buf[16384], named[ADF_DIGEST_LEN];
    adf_cache_trailer_t tr;
    apr_off_t off;
    apr_uint32_t crc = 0;
    ssize_t n;

    *keep = *old = 0;
    switch (adf_cache_trailer_read(fd, fi->size, &tr)) {
    case ADF_CACHE_TRAILER_OK:
        break;
    case ADF_CACHE_TRAILER_OLD:
        *old = 1;
        return "written by an earlier release";
    default:
        return "no trailer at its end (truncated or damaged)";
    }
    if (!adf_cache_trailer_matches(&tr, &cr->key, c)) {
        *keep = 1;
        return "holds another file";
    }
    if (dict && adf_cache_delta_dict(fd, tr.length, named) != 0) {
        return "no dcz header at its start (damaged)";
    }
    if (dict && memcmp(named, dict, ADF_DIGEST_LEN)) {
        *keep = 1;      /* another dictionary's, in the same slot */
        return "made against another dictionary";
    }
    for (off = 0; off < (apr_off_t)tr.length; off += n) {
        apr_off_t left = (apr_off_t)tr.length - off;

        n = pread(fd, buf, left < (apr_off_t)sizeof(buf) ? (size_t)left
                                                         : sizeof(buf), off);
        if (n < 0 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0) {
            return "shorter than its trailer says";
        }
        crc = adf_cache_crc(crc, buf, (apr_size_t)n);
    }
    if (crc != tr.crc) {
        return "its bytes do not match their CRC (damaged)";
    }
    m->length = (apr_off_t)tr.length;
    memcpy(m->digest, tr.digest, ADF_DIGEST_LEN);
    memcpy(m->source, tr.source, ADF_DIGEST_LEN);
    return NULL;
}

/* Remove the damaged entry at dir/name, if it is still the file that was
 * open (device dev, inode ino: the worker may have written a new one
 * since).  Whether this call removed it: however many requests find it
 * damaged at once, one does. */
static int remove_entry(const adf_cache_dir_t *dir, const char *name,
                        apr_uint64_t dev, apr_uint64_t ino)
{
    struct stat now;

    return fstatat(dir->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0
           && (apr_uint64_t)now.st_ino == ino
           && (apr_uint64_t)now.st_dev == dev
           && unlinkat(dir->fd, name, 0) == 0;
}

/* How a request opens an entry or a kept dictionary: a FIFO put in the
 * directory (by the children's own user: a CGI) must not hold a worker
 * in open() until something writes to it. */
#define ENTRY_OPEN (O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)

/* The entry as the child holds it (adf_held.h), if it is still the file
 * the path names: one statx, no open.  (mnt 0: the directory, open since
 * start-up, cannot be remounted under it.)  -1: statx cannot tell (then
 * nothing is held). */
static int __attribute__((noinline)) held_entry(request_rec *r,
                                                adf_cache_req_t *cr,
                                                adf_coding_e c,
                                                const char *name,
                                                const char *key,
                                                apr_finfo_t *fi,
                                                const adf_held_t **heldp)
{
    const adf_memo_t *m;
    adf_ident_t id, ns;
    apr_uint64_t mnt;

    switch (adf_held_stat(gen->dir[cr->index].fd, name, fi, &ns, &mnt,
                          r->pool)) {
    case APR_SUCCESS:
        break;
    case ENOSYS:
    case EPERM:
        return -1;
    default:
        return 0;
    }
    if (fi->filetype != APR_REG || fi->user != entry_owner) {
        return 0;
    }
    /* to the microsecond, as the check below takes it from its file */
    adf_ident_of_finfo(&id, fi);
    if (!(*heldp = adf_held_get(r, key, &id, 0, &cr->key, c))) {
        return 0;
    }
    m = adf_held_found(*heldp);
    fi->fname = key;
    fi->size = m->length;
    fi->mtime = r->finfo.mtime;     /* F's: see below */
    memcpy(cr->digest, m->digest, ADF_DIGEST_LEN);
    memcpy(cr->source, m->source, ADF_DIGEST_LEN);
    return 1;
}

/* adf_cache_lookup of the entry named from hash h: cr's file in coding
 * c, made against dictionary dict (its SHA-256) where c needs one. */
static int lookup_entry(request_rec *r, adf_cache_req_t *cr, adf_coding_e c,
                        apr_uint64_t h, const unsigned char *dict,
                        const char **path, apr_finfo_t *fi, const int **fdp,
                        const adf_held_t **heldp)
{
    const adf_cache_dir_t *dir = &gen->dir[cr->index];
    char name[ADF_CACHE_NAME_MAX];
    apr_file_t *file;
    const char *why, *key = NULL;
    adf_ident_t id;
    adf_memo_t m;
    const int *held;
    int fd, keep, old;

    *fdp = NULL;
    *heldp = NULL;
    adf_cache_entry_name(name, h, c);
    if (adf_held_may(r)) {
        key = apr_pstrcat(r->pool, dir->conf->dir, "/", name, NULL);
        switch (held_entry(r, cr, c, name, key, fi, heldp)) {
        case 1:
            *path = key;
            return 1;
        case -1:
            key = NULL;
            break;
        }
    }
    if ((fd = openat(dir->fd, name, ENTRY_OPEN)) < 0) {
        return 0;
    }
    held = adf_req_hold_fd(r, fd);
    apr_os_file_put(&file, &fd, APR_READ, r->pool);
    /* The worker, this user, writes every entry: another owner's file
     * (root's or a user's whom an ACL let in) is none of ours. */
    if (apr_file_info_get(fi, APR_FINFO_MIN | APR_FINFO_IDENT
                              | APR_FINFO_OWNER, file) != APR_SUCCESS
        || fi->filetype != APR_REG || fi->user != entry_owner) {
        adf_req_let_go(r, held);
        return 0;
    }
    adf_ident_of_finfo(&id, fi);
    /* (mnt 0: the directory, open since start-up, cannot be remounted) */
    if (!adf_memo_get(&id, 0, &cr->key, c, &m)) {
        if ((why = check_entry(cr, c, dict, fd, fi, &m, &keep, &old))) {
            if (!keep && remove_entry(dir, name, (apr_uint64_t)fi->device,
                                      (apr_uint64_t)fi->inode) && !old) {
                apr_atomic_inc64(&gen->sh->counts[cr->index].corrupt);
                ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                              ADFLOGNO(00021) "removed cache entry %s/%s "
                              "of %s: %s", dir->conf->dir, name,
                              r->filename, why);
            }
            adf_req_let_go(r, held);
            return 0;
        }
        adf_memo_put(&id, 0, &cr->key, c, &m);
    }
    if (key) {
        adf_held_put(key, fd, &id, 0, &cr->key, c, &m);
    }
    /* A handler that opens the request's file by name (not ours: it
     * sends from fd) reaches the entry through this name, and sends this
     * much of it: the coded bytes. */
    *path = fd_path(r->pool, fd);
    fi->fname = *path;
    fi->size = m.length;
    /* Last-Modified and the tag's date are F's: the worker dates entries
     * so, but one copied back without -p would send its copy's date, weak
     * and from after F's. */
    fi->mtime = r->finfo.mtime;
    *fdp = held;
    memcpy(cr->digest, m.digest, ADF_DIGEST_LEN);
    memcpy(cr->source, m.source, ADF_DIGEST_LEN);
    return 1;
}

int adf_cache_lookup(request_rec *r, adf_cache_req_t *cr, adf_coding_e c,
                     const char **path, apr_finfo_t *fi, const int **fdp,
                     const adf_held_t **heldp)
{
    return lookup_entry(r, cr, c, cr->hash, NULL, path, fi, fdp, heldp);
}

int adf_cache_delta_lookup(request_rec *r, adf_cache_req_t *cr,
                           const adf_cache_kept_t *k, const char **path,
                           apr_finfo_t *fi, const int **fdp,
                           const adf_held_t **heldp)
{
    apr_uint64_t h = adf_cache_delta_hash(cr->hash, k->hash);

    if (!lookup_entry(r, cr, ADF_DCZ, h, k->hash, path, fi, fdp, heldp)) {
        return 0;
    }
    cr->hash = h;       /* its hits are the delta's, for the LRU */
    return 1;
}

const unsigned char *adf_cache_digest(const adf_cache_req_t *cr)
{
    return cr->digest;
}

const unsigned char *adf_cache_source(const adf_cache_req_t *cr)
{
    return cr->source;
}

/* The virtual host whose files' versions r may be answered against:
 * "ServerName:port" (the port ServerName names, 0 if none). */
static const char *host_of(request_rec *r)
{
    return apr_psprintf(r->pool, "%s:%u", r->server->server_hostname
                                          ? r->server->server_hostname : "",
                        (unsigned)r->server->port);
}

/* The dictionary file whose SHA-256 is hash, kept for virtual host host's
 * file at path (on disk) and its other versions, in cache directory
 * index, open (fd, and *st), owned by the worker; -1 when there is none.
 * *h: its name's hash. */
static int open_dict(request_rec *r, int index, const unsigned char *hash,
                     const char *host, const char *path, struct stat *st,
                     apr_uint64_t *h)
{
    char name[ADF_CACHE_NAME_MAX];
    int fd;

    *h = adf_cache_dict_hash(hash, host, adf_dict_match(r->pool, path));
    adf_cache_entry_name(name, *h, ADF_IDENTITY);
    if ((fd = openat(gen->dir[index].fd, name, ENTRY_OPEN)) < 0) {
        return -1;
    }
    adf_req_hold_fd(r, fd);
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)
        || st->st_uid != entry_owner) {
        return -1;
    }
    return fd;
}

int adf_cache_version_kept(request_rec *r, const adf_cache_req_t *cr)
{
    const char *host = host_of(r);
    apr_uint64_t vkey = adf_cache_version_key(cr->hash, host, cr->index);
    apr_uint64_t d = adf_cache_kept_get(gen->sh, vkey);
    adf_cache_shared_t *sh = gen->sh;
    adf_cache_version_t *v;
    char name[ADF_CACHE_NAME_MAX];
    struct stat st;
    apr_uint32_t i;

    if (d) {
        adf_cache_entry_name(name, d, ADF_IDENTITY);
        if (fstatat(gen->dir[cr->index].fd, name, &st, AT_SYMLINK_NOFOLLOW)
            == 0 && S_ISREG(st.st_mode) && st.st_uid == entry_owner) {
            return 1;
        }
    }
    /* not kept (or no longer: evicted, removed): queued, once */
    if (r->finfo.size > ADF_DICT_MAX || strlen(r->uri) >= ADF_CACHE_PATH
        || strlen(host) >= ADF_CACHE_HOST || adf_cache_lock(sh)) {
        return 0;
    }
    if (sh->vbusy == vkey) {
        goto done;
    }
    for (i = 0; i < sh->vcount; i++) {
        if (sh->versions[(sh->vhead + i) % ADF_CACHE_VERSIONS].vkey == vkey) {
            goto done;
        }
    }
    if (sh->vcount == ADF_CACHE_VERSIONS) {
        apr_atomic_inc64(&sh->counts[cr->index].dropped);
        goto done;
    }
    v = &sh->versions[(sh->vhead + sh->vcount) % ADF_CACHE_VERSIONS];
    v->key = cr->key;
    v->hash = cr->hash;
    v->vkey = vkey;
    v->generation = gen->generation;
    v->cache = (apr_uint32_t)cr->index;
    apr_cpystrn(v->path, r->filename, sizeof(v->path));
    apr_cpystrn(v->uri, r->uri, sizeof(v->uri));
    apr_cpystrn(v->host, host, sizeof(v->host));
    sh->vcount++;       /* the item is whole before it counts */
done:
    adf_cache_unlock(sh);
    return 0;
}

/* The kept dictionary open on st, named from h, of no use: removed if it
 * is still that file, with a warning the one time it is removed when it
 * is damaged (why; NULL: an earlier release's, which is no damage). */
static void drop_dict(request_rec *r, int index, apr_uint64_t h,
                      apr_uint64_t dev, apr_uint64_t ino, const char *why)
{
    char name[ADF_CACHE_NAME_MAX];

    adf_cache_entry_name(name, h, ADF_IDENTITY);
    if (remove_entry(&gen->dir[index], name, dev, ino) && why) {
        apr_atomic_inc64(&gen->sh->counts[index].corrupt);
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, ADFLOGNO(00030)
                      "removed kept dictionary %s/%s: %s",
                      gen->dir[index].conf->dir, name, why);
    }
}

int adf_cache_dict_find(request_rec *r, const adf_dir_conf_t *dc,
                        const unsigned char *hash, const char *path,
                        adf_cache_kept_t *k)
{
    const adf_srv_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                    &adaptive_deflate_module);
    const char *host = host_of(r);
    unsigned char rec[ADF_CACHE_ORIGIN_MAX];
    adf_cache_trailer_t tr;
    adf_cache_origin_t o;
    adf_ident_t id;
    struct stat st;
    apr_off_t len;
    int fd, index;

    if (!adf_cache_applies(r, dc)
        || (fd = open_dict(r, (index = sc->cache->index), hash, host, path,
                           &st, &k->h)) < 0) {
        return 0;
    }
    k->fd = fd;
    k->index = index;
    k->dev = (apr_uint64_t)st.st_dev;
    k->ino = (apr_uint64_t)st.st_ino;
    adf_ident_of_stat(&id, &st);
    k->id = adf_cache_key_hash(&id) | 1;
    switch (adf_cache_trailer_read(fd, st.st_size, &tr)) {
    case ADF_CACHE_TRAILER_OK:
        break;
    case ADF_CACHE_TRAILER_OLD:
        drop_dict(r, index, k->h, k->dev, k->ino, NULL);
        return 0;
    default:
        drop_dict(r, index, k->h, k->dev, k->ino, "no trailer at its end "
                  "(truncated or damaged)");
        return 0;
    }
    if (tr.coding != ADF_IDENTITY) {
        drop_dict(r, index, k->h, k->dev, k->ino,
                  "not a dictionary's trailer");
        return 0;
    }
    if (memcmp(tr.source, hash, ADF_DIGEST_LEN)) {
        return 0;       /* another dictionary's name (64 bits): no damage */
    }
    if ((len = adf_cache_origin_read(fd, tr.length, rec, &o)) < 0) {
        drop_dict(r, index, k->h, k->dev, k->ino, "its record of where it "
                  "was served is damaged");
        return 0;
    }
    /* Used only where its client could have read the file it was kept
     * from: its bytes answer "is this file exactly what you guess?".
     * Asked for every request, whether its bytes are read or were
     * prepared before. */
    if (strcmp(o.host, host) || len > ADF_DICT_MAX
        || !adf_access_may_read(r, o.uri, o.path)) {
        return 0;
    }
    k->len = (apr_size_t)len;
    k->elsewhere = strcmp(o.path, path) != 0;
    memcpy(k->hash, hash, ADF_DIGEST_LEN);
    return 1;
}

void adf_cache_dict_touch(request_rec *r, const adf_cache_kept_t *k)
{
    apr_atomic_set64(&gen->sh->touch[k->h % ADF_CACHE_TOUCH].hash, k->h);
    apr_atomic_set64(&gen->sh->touch[k->h % ADF_CACHE_TOUCH].used,
                     (apr_uint64_t)r->request_time);
}

unsigned char *adf_cache_dict_read(request_rec *r, const adf_cache_kept_t *k)
{
    unsigned char *buf, sha[ADF_DIGEST_LEN];
    adf_digest_t dg;
    apr_size_t got = 0;

    if (!(buf = malloc(k->len ? k->len : 1))) {
        return NULL;
    }
    while (got < k->len) {
        ssize_t n = pread(k->fd, buf + got, k->len - got, (off_t)got);

        if (n <= 0 && !(n < 0 && errno == EINTR)) {
            free(buf);
            return NULL;
        }
        got += n > 0 ? (apr_size_t)n : 0;
    }
    /* the client named these bytes: they must be exactly those */
    if (adf_digest_init(&dg) != 0) {
        free(buf);
        return NULL;
    }
    adf_digest_update(&dg, buf, got);
    if (adf_digest_final(&dg, sha) != 0) {
        free(buf);
        return NULL;
    }
    if (memcmp(sha, k->hash, sizeof(sha))) {
        drop_dict(r, k->index, k->h, k->dev, k->ino, "it does not hold the "
                  "bytes it is named for");
        free(buf);
        return NULL;
    }
    adf_cache_dict_touch(r, k);
    return buf;
}

void adf_cache_hit(request_rec *r, adf_cache_req_t *cr)
{
    adf_cache_shared_t *sh = gen->sh;
    apr_uint32_t i = (apr_uint32_t)(cr->hash % ADF_CACHE_TOUCH);

    adf_note(r, "cache", "hit");
    apr_atomic_inc64(&sh->counts[cr->index].hits);
    /* Two stores: a torn pair only misdates one entry's last use. */
    apr_atomic_set64(&sh->touch[i].hash, cr->hash);
    apr_atomic_set64(&sh->touch[i].used, (apr_uint64_t)r->request_time);
}

void adf_cache_miss(request_rec *r, adf_cache_req_t *cr,
                    apr_uint32_t codings)
{
    adf_note(r, "cache", "miss");
    apr_atomic_inc64(&gen->sh->counts[cr->index].misses);
    adf_cache_queue(r, cr, codings);
}

/* Queue r's file for the worker: in codings, or (k not NULL) its delta
 * against k. */
static void queue(request_rec *r, adf_cache_req_t *cr, apr_uint32_t codings,
                  const adf_cache_kept_t *k)
{
    adf_cache_shared_t *sh = gen->sh;
    adf_cache_counts_t *n = &sh->counts[cr->index];
    adf_cache_item_t *it;
    apr_uint32_t i;

    if (adf_cache_lock(sh)) {
        return;
    }
    /* Once per file, however many children and threads miss it. */
    if (sh->busy == cr->hash) {
        goto done;
    }
    for (i = 0; i < sh->count; i++) {
        it = &sh->queue[(sh->head + i) % ADF_CACHE_QUEUE];
        if (it->hash == cr->hash && it->generation == gen->generation
            && it->dict_name == (k ? k->h : 0)
            && (!k || !memcmp(it->dict, k->hash, ADF_DIGEST_LEN))) {
            it->codings |= codings;
            goto done;
        }
    }
    if (sh->count == ADF_CACHE_QUEUE) {
        apr_atomic_inc64(&n->dropped);
        goto done;
    }
    it = &sh->queue[(sh->head + sh->count) % ADF_CACHE_QUEUE];
    it->key = cr->key;
    it->hash = cr->hash;
    it->generation = gen->generation;
    it->cache = (apr_uint32_t)cr->index;
    it->codings = codings;
    it->dict_name = k ? k->h : 0;
    if (k) {
        memcpy(it->dict, k->hash, ADF_DIGEST_LEN);
    }
    apr_cpystrn(it->path, r->filename, sizeof(it->path));
    sh->count++;        /* the item is whole before it counts */
done:
    adf_cache_unlock(sh);
}

void adf_cache_queue(request_rec *r, adf_cache_req_t *cr,
                     apr_uint32_t codings)
{
    queue(r, cr, codings, NULL);
}

void adf_cache_delta_queue(request_rec *r, adf_cache_req_t *cr,
                           const adf_cache_kept_t *k)
{
    queue(r, cr, 1u << ADF_DCZ, k);
}

/* Is r's file inside a cache directory (by name, or an entry's name in a
 * directory that is one)? */
static int __attribute__((noinline)) in_cache_dir(request_rec *r)
{
    const char *base = strrchr(r->filename, '/');
    apr_uint64_t hash;
    adf_coding_e c;
    apr_finfo_t fi;
    adf_cache_writer_t wr;
    int i;

    for (i = 0; i < gen->n; i++) {
        if (holds(gen->dir[i].conf->dir, r->filename)) {
            return 1;
        }
    }
    if (!base || adf_cache_file_kind(base + 1, &hash, &c, &wr)
                 == ADF_CACHE_FILE_OTHER
        || apr_stat(&fi, apr_pstrmemdup(r->pool, r->filename,
                                        base - r->filename),
                    APR_FINFO_IDENT, r->pool) != APR_SUCCESS) {
        return 0;
    }
    for (i = 0; i < gen->n; i++) {
        if ((apr_uint64_t)fi.device == gen->dir[i].dev
            && (apr_uint64_t)fi.inode == gen->dir[i].ino) {
            return 1;   /* reached through a link */
        }
    }
    return 0;
}

int adf_cache_guard(request_rec *r)
{
    if (!gen || !r->filename || !in_cache_dir(r)) {
        return DECLINED;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "%s is in a compressed "
                  "cache: only served as an encoding of its source",
                  r->filename);
    return HTTP_NOT_FOUND;
}

/* ---- status ------------------------------------------------------------------- */

static void json_ratio(request_rec *r, apr_uint64_t hits, apr_uint64_t misses)
{
    if (hits + misses) {
        ap_rprintf(r, "%.4f", (double)hits / (double)(hits + misses));
    }
    else {
        ap_rputs("null", r);
    }
}

int adf_cache_stats(adf_cache_dir_stats_t *d, int max, apr_uint32_t *queue,
                    int *idle)
{
    adf_idle_view_t v;
    int i;

    if (!gen) {
        return 0;
    }
    for (i = 0; i < gen->n && i < max; i++) {
        adf_cache_counts_t *n = &gen->sh->counts[i];

        d[i].dir = gen->dir[i].conf->dir;
        d[i].max_bytes = gen->dir[i].conf->max;
        d[i].entries = apr_atomic_read64(&n->entries);
        d[i].bytes = apr_atomic_read64(&n->bytes);
        d[i].hits = apr_atomic_read64(&n->hits);
        d[i].misses = apr_atomic_read64(&n->misses);
        d[i].evictions = apr_atomic_read64(&n->evictions);
        d[i].written = apr_atomic_read64(&n->written);
        d[i].dropped = apr_atomic_read64(&n->dropped);
        d[i].corrupt = apr_atomic_read64(&n->corrupt);
        d[i].writable = !apr_atomic_read32(&n->failing);
    }
    adf_shm_idle_view(&v);
    *queue = gen->sh->count;
    *idle = !v.stale && v.load >= 0 && v.load < v.idle_below;
    return i;
}

void adf_cache_status_json(request_rec *r,
                           void (*str)(request_rec *r, const char *v))
{
    adf_cache_counts_t sum;
    adf_idle_view_t idle;
    int i;

    if (!gen) {
        ap_rputs(",\"cache\":null", r);
        return;
    }
    memset(&sum, 0, sizeof(sum));
    adf_shm_idle_view(&idle);
    ap_rputs(",\"cache\":{\"dirs\":[", r);
    for (i = 0; i < gen->n; i++) {
        adf_cache_counts_t *n = &gen->sh->counts[i], c;

        c.hits = apr_atomic_read64(&n->hits);
        c.misses = apr_atomic_read64(&n->misses);
        c.evictions = apr_atomic_read64(&n->evictions);
        c.entries = apr_atomic_read64(&n->entries);
        c.bytes = apr_atomic_read64(&n->bytes);
        ap_rputs(i ? ",{\"dir\":" : "{\"dir\":", r);
        str(r, gen->dir[i].conf->dir);
        ap_rprintf(r, ",\"max_bytes\":%" APR_OFF_T_FMT ",\"entries\":%"
                   APR_UINT64_T_FMT ",\"bytes\":%" APR_UINT64_T_FMT
                   ",\"counted\":%s,\"hits\":%" APR_UINT64_T_FMT
                   ",\"misses\":%" APR_UINT64_T_FMT ",\"hit_ratio\":",
                   gen->dir[i].conf->max, c.entries, c.bytes,
                   apr_atomic_read32(&n->counted) ? "true" : "false",
                   c.hits, c.misses);
        json_ratio(r, c.hits, c.misses);
        ap_rprintf(r, ",\"evictions\":%" APR_UINT64_T_FMT ",\"written\":%"
                   APR_UINT64_T_FMT ",\"dropped\":%" APR_UINT64_T_FMT
                   ",\"corrupt\":%" APR_UINT64_T_FMT ",\"writable\":%s"
                   ",\"dictionaries\":%" APR_UINT64_T_FMT
                   ",\"dictionary_bytes\":%" APR_UINT64_T_FMT "}",
                   c.evictions, apr_atomic_read64(&n->written),
                   apr_atomic_read64(&n->dropped),
                   apr_atomic_read64(&n->corrupt),
                   apr_atomic_read32(&n->failing) ? "false" : "true",
                   apr_atomic_read64(&n->dicts),
                   apr_atomic_read64(&n->dict_bytes));
        sum.hits += c.hits;
        sum.misses += c.misses;
        sum.evictions += c.evictions;
        sum.entries += c.entries;
        sum.bytes += c.bytes;
    }
    ap_rprintf(r, "],\"entries\":%" APR_UINT64_T_FMT ",\"bytes\":%"
               APR_UINT64_T_FMT ",\"hits\":%" APR_UINT64_T_FMT ",\"misses\":%"
               APR_UINT64_T_FMT ",\"hit_ratio\":", sum.entries, sum.bytes,
               sum.hits, sum.misses);
    json_ratio(r, sum.hits, sum.misses);
    ap_rprintf(r, ",\"evictions\":%" APR_UINT64_T_FMT ",\"queue\":%u,"
               "\"queue_max\":%d,\"working\":%s,\"worker_pid\":%u,"
               "\"idle\":%s,\"idle_below\":%.1f}", sum.evictions,
               gen->sh->count, ADF_CACHE_QUEUE,
               apr_atomic_read64(&gen->sh->busy) ? "true" : "false",
               apr_atomic_read32(&gen->sh->worker_pid),
               !idle.stale && idle.load >= 0 && idle.load < idle.idle_below
               ? "true" : "false", idle.idle_below);
}

void adf_cache_status_hook(request_rec *r, int flags)
{
    apr_uint64_t hits = 0, misses = 0, entries = 0, bytes = 0;
    int i;

    if (!gen) {
        return;
    }
    for (i = 0; i < gen->n; i++) {
        hits += apr_atomic_read64(&gen->sh->counts[i].hits);
        misses += apr_atomic_read64(&gen->sh->counts[i].misses);
        entries += apr_atomic_read64(&gen->sh->counts[i].entries);
        bytes += apr_atomic_read64(&gen->sh->counts[i].bytes);
    }
    if (flags & AP_STATUS_SHORT) {
        ap_rprintf(r, "AdaptiveDeflateCacheEntries: %" APR_UINT64_T_FMT "\n"
                   "AdaptiveDeflateCacheBytes: %" APR_UINT64_T_FMT "\n"
                   "AdaptiveDeflateCacheHits: %" APR_UINT64_T_FMT "\n"
                   "AdaptiveDeflateCacheMisses: %" APR_UINT64_T_FMT "\n",
                   entries, bytes, hits, misses);
        return;
    }
    ap_rprintf(r, "<dl><dt>compressed cache: %" APR_UINT64_T_FMT " entries, %"
               APR_UINT64_T_FMT " bytes, %" APR_UINT64_T_FMT " hits, %"
               APR_UINT64_T_FMT " misses, %u queued</dt></dl>\n", entries,
               bytes, hits, misses, gen->sh->count);
}
