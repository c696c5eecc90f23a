/* What a child holds mapped of the stored files it checked (adf_held.h).
 * A table per child under one lock, keyed by the file's path; each
 * entry counts its references (the table's, each request's that found
 * it, each bucket's), and the last one unmaps it, whichever thread that
 * is. */
#include "adf_held.h"

#include <apr_atomic.h>
#include <apr_hash.h>
#include <http_core.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define HELD_MAX 1024                   /* files a child holds */
/* Unasked for this long, a file is let go: while mapped, a deleted or
 * replaced one keeps its disk space, and its filesystem cannot be
 * unmounted ("target is busy").  Long enough for the files that are
 * asked for all the time, which are the ones a system call less pays
 * for. */
#define HELD_IDLE apr_time_from_sec(2)
#define HELD_SWEEP apr_time_from_sec(1) /* at most this often */

struct adf_held_t {
    char *path;
    adf_ident_t id;
    apr_uint64_t mnt;
    adf_ident_t src;            /* checked as holding F's version */
    int kind;                   /* ... as this (adf_memo.h) */
    adf_memo_t found;           /* what the check found */
    void *base;
    apr_size_t len;             /* mapped: found.length */
    apr_time_t used;            /* last asked for (under the lock) */
    volatile apr_uint32_t refs;
};

/* The table lives as long as the process: the watchdog thread that
 * sweeps it is joined after pchild's cleanups run, so nothing of it may go
 * with pchild (a lock destroyed, a table freed under a sweep).  Made once
 * per process (a one-process server's restarts find it made). */
static apr_hash_t *held;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static apr_time_t swept;

static void release(adf_held_t *h)
{
    if (!apr_atomic_dec32(&h->refs)) {
        munmap(h->base, h->len);
        free(h->path);
        free(h);
    }
}

static apr_status_t release_cleanup(void *data)
{
    release(data);
    return APR_SUCCESS;
}

void adf_held_child_init(apr_pool_t *pchild)
{
    apr_pool_t *p;

    pthread_mutex_lock(&held_lock);
    if (!held && apr_pool_create_unmanaged_ex(&p, NULL, NULL)
                 == APR_SUCCESS) {
        held = apr_hash_make(p);
    }
    pthread_mutex_unlock(&held_lock);
}

/* Drop the table's reference to files unasked for since HELD_IDLE, at
 * most every HELD_SWEEP.  Under the lock. */
static void sweep(apr_time_t now)
{
    apr_hash_index_t *hi;

    if (!held || now - swept < HELD_SWEEP) {
        return;
    }
    swept = now;
    /* (deleting the entry an iteration is at is safe in apr_hash) */
    for (hi = apr_hash_first(NULL, held); hi; hi = apr_hash_next(hi)) {
        adf_held_t *h = apr_hash_this_val(hi);

        if (now - h->used >= HELD_IDLE) {
            apr_hash_set(held, h->path, APR_HASH_KEY_STRING, NULL);
            release(h);
        }
    }
}

void adf_held_sweep(apr_time_t now)
{
    pthread_mutex_lock(&held_lock);
    sweep(now);
    pthread_mutex_unlock(&held_lock);
}

const adf_held_t *adf_held_get(request_rec *r, const char *key,
                               const adf_ident_t *id, apr_uint64_t mnt,
                               const adf_ident_t *src, int kind)
{
    adf_held_t *h;

    pthread_mutex_lock(&held_lock);
    h = held ? apr_hash_get(held, key, APR_HASH_KEY_STRING) : NULL;
    if (h && h->mnt == mnt && h->kind == kind && adf_ident_same(&h->id, id)
        && adf_ident_same(&h->src, src)) {
        /* (a long request's time is older than the last one's) */
        h->used = h->used > r->request_time ? h->used : r->request_time;
        apr_atomic_inc32(&h->refs);
    }
    else {
        h = NULL;
    }
    sweep(r->request_time);
    pthread_mutex_unlock(&held_lock);
    if (h) {
        apr_pool_cleanup_register(r->pool, h, release_cleanup,
                                  apr_pool_cleanup_null);
    }
    return h;
}

void adf_held_put(const char *key, int fd, const adf_ident_t *id,
                  apr_uint64_t mnt, const adf_ident_t *src, int kind,
                  const adf_memo_t *found)
{
    adf_held_t *h, *old;
    void *base;

    if (!held || found->length <= 0 || found->length > id->size
        || found->length > ADF_HELD_SIZE_MAX) {
        return;
    }
    base = mmap(NULL, (size_t)found->length, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        return;
    }
    if (!(h = calloc(1, sizeof(*h))) || !(h->path = strdup(key))) {
        free(h);
        munmap(base, (size_t)found->length);
        return;
    }
    h->id = *id;
    h->mnt = mnt;
    h->src = *src;
    h->kind = kind;
    h->found = *found;
    h->base = base;
    h->len = (apr_size_t)found->length;
    h->refs = 1;                /* the table's */
    h->used = apr_time_now();
    pthread_mutex_lock(&held_lock);
    if ((old = apr_hash_get(held, key, APR_HASH_KEY_STRING))) {
        apr_hash_set(held, old->path, APR_HASH_KEY_STRING, NULL);
        release(old);
    }
    if (apr_hash_count(held) >= HELD_MAX) {
        sweep(h->used);
    }
    if (apr_hash_count(held) < HELD_MAX) {
        apr_hash_set(held, h->path, APR_HASH_KEY_STRING, h);
        h = NULL;
    }
    pthread_mutex_unlock(&held_lock);
    if (h) {
        release(h);             /* full of files in use */
    }
}

const adf_memo_t *adf_held_found(const adf_held_t *h)
{
    return &h->found;
}

int adf_held_may(request_rec *r)
{
    core_dir_config *d = ap_get_core_module_config(r->per_dir_config);

    /* the components as ap_make_etag_ex takes them */
    etag_components_t bits = (d->etag_bits & ~d->etag_remove) | d->etag_add;

    return d->enable_mmap != ENABLE_MMAP_OFF
           && !AP_SENDFILE_ENABLED(d->enable_sendfile)
           && !(bits & ETAG_DIGEST) && !AP_REQUEST_IS_STRONG_ETAG(r);
}

static adf_ts_t ts_of(const struct statx_timestamp *t)
{
    adf_ts_t ts;

    ts.sec = t->tv_sec;
    ts.nsec = t->tv_nsec;
    return ts;
}

static apr_time_t time_of(const struct statx_timestamp *t)
{
    return apr_time_from_sec(t->tv_sec) + t->tv_nsec / 1000;
}

void adf_held_ident(const struct statx *sx, adf_ident_t *id,
                    apr_uint64_t *mnt)
{
    id->dev = (apr_uint64_t)makedev(sx->stx_dev_major, sx->stx_dev_minor);
    id->ino = sx->stx_ino;
    id->size = (apr_int64_t)sx->stx_size;
    id->mtime = ts_of(&sx->stx_mtime);
    id->ctime = ts_of(&sx->stx_ctime);
    *mnt = sx->stx_mask & STATX_MNT_ID_UNIQUE ? sx->stx_mnt_id : 0;
}

apr_status_t adf_held_stat(int dirfd, const char *name, apr_finfo_t *fi,
                           adf_ident_t *id, apr_uint64_t *mnt,
                           apr_pool_t *p)
{
    struct statx sx;
    mode_t m;

    if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW,
              STATX_BASIC_STATS | STATX_MNT_ID_UNIQUE, &sx) != 0) {
        if (dirfd != AT_FDCWD || (errno != ENOSYS && errno != EPERM)) {
            return errno;
        }
        /* a sandbox that knows no statx (ENOSYS, or a filter's EPERM) */
        *mnt = 0;
        if (apr_stat(fi, name, APR_FINFO_NORM | APR_FINFO_LINK, p)
            != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        adf_ident_of_finfo(id, fi);
        return APR_SUCCESS;
    }
    adf_held_ident(&sx, id, mnt);
    m = sx.stx_mode;
    memset(fi, 0, sizeof(*fi));
    fi->pool = p;
    fi->valid = APR_FINFO_NORM | APR_FINFO_NLINK;
    fi->filetype = S_ISREG(m) ? APR_REG : S_ISLNK(m) ? APR_LNK
                   : S_ISDIR(m) ? APR_DIR : S_ISCHR(m) ? APR_CHR
                   : S_ISBLK(m) ? APR_BLK : S_ISFIFO(m) ? APR_PIPE
                   : S_ISSOCK(m) ? APR_SOCK : APR_UNKFILE;
    /* APR's permission bits: a hex digit for each octal one */
    fi->protection = (apr_fileperms_t)(((m & 0700) << 2) | ((m & 070) << 1)
                                       | (m & 07)
                                       | (m & S_ISUID ? APR_USETID : 0)
                                       | (m & S_ISGID ? APR_GSETID : 0)
                                       | (m & S_ISVTX ? APR_WSTICKY : 0));
    fi->user = sx.stx_uid;
    fi->group = sx.stx_gid;
    fi->size = (apr_off_t)sx.stx_size;
    fi->csize = (apr_off_t)sx.stx_blocks * 512;
    fi->device = (apr_dev_t)id->dev;
    fi->inode = (apr_ino_t)sx.stx_ino;
    fi->nlink = (apr_int32_t)sx.stx_nlink;
    fi->atime = time_of(&sx.stx_atime);
    fi->mtime = time_of(&sx.stx_mtime);
    fi->ctime = time_of(&sx.stx_ctime);
    fi->fname = name;
    return APR_SUCCESS;
}

/* ---- the bucket -------------------------------------------------------- */

typedef struct {
    apr_bucket_refcount refcount;
    adf_held_t *h;
} held_bucket_t;

static apr_status_t held_read(apr_bucket *b, const char **str,
                              apr_size_t *len, apr_read_type_e block)
{
    const held_bucket_t *hb = b->data;

    *str = (const char *)hb->h->base + b->start;
    *len = b->length;
    return APR_SUCCESS;
}

static void held_destroy(void *data)
{
    held_bucket_t *hb = data;

    if (apr_bucket_shared_destroy(hb)) {
        release(hb->h);
        apr_bucket_free(hb);
    }
}

/* Set aside as it is: its bytes live as long as it does. */
static const apr_bucket_type_t held_type = {
    "ADAPTIVE_DEFLATE_HELD", 5, APR_BUCKET_DATA,
    held_destroy, held_read, apr_bucket_setaside_noop,
    apr_bucket_shared_split, apr_bucket_shared_copy
};

apr_bucket *adf_held_bucket(const adf_held_t *ch, apr_bucket_alloc_t *list)
{
    adf_held_t *h = (adf_held_t *)ch;
    held_bucket_t *hb = apr_bucket_alloc(sizeof(*hb), list);
    apr_bucket *b = apr_bucket_alloc(sizeof(*b), list);

    apr_atomic_inc32(&h->refs);
    hb->h = h;
    APR_BUCKET_INIT(b);
    b->free = apr_bucket_free;
    b->list = list;
    b = apr_bucket_shared_make(b, hb, 0, h->len);
    b->type = &held_type;
    return b;
}
