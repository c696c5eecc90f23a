/* What a child holds mapped of the siblings it checked (adf_held.h).
 * A table per child under one lock, keyed by the sibling's path; each
 * entry counts its references (the table's, each request's that found
 * it, each bucket's), and the last one unmaps it, whichever thread that
 * is. */
#include "adf_held.h"

#include <apr_atomic.h>
#include <apr_hash.h>
#include <apr_thread_mutex.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HELD_MAX 1024                   /* siblings a child holds */
/* Unasked for this long, a sibling is let go: while mapped, a deleted or
 * replaced one keeps its disk space, and its filesystem cannot be
 * unmounted ("target is busy").  Long enough for the siblings that are
 * asked for all the time, which are the ones a system call less pays
 * for. */
#define HELD_IDLE apr_time_from_sec(2)
#define HELD_SWEEP apr_time_from_sec(1) /* at most this often */

struct adf_held_t {
    char *path;
    adf_ident_t id;
    apr_uint64_t mnt;
    adf_ident_t src;            /* checked as holding F's version */
    unsigned char digest[ADF_DIGEST_LEN];
    void *base;
    apr_size_t len;
    apr_time_t used;            /* last asked for (under the lock) */
    volatile apr_uint32_t refs;
};

static apr_pool_t *held_pool;
static apr_hash_t *held;
static apr_thread_mutex_t *held_lock;
static apr_time_t swept;

static void release(adf_held_t *h)
{
    if (!apr_atomic_dec32(&h->refs)) {
        munmap(h->base, h->len);
        free(h->path);
        free(h);
    }
}

/* The child goes (its threads joined): every sibling let go. */
static apr_status_t let_all_go(void *data)
{
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(NULL, held); hi; hi = apr_hash_next(hi)) {
        release(apr_hash_this_val(hi));
    }
    held_lock = NULL;
    return APR_SUCCESS;
}

void adf_held_child_init(apr_pool_t *pchild)
{
    if (apr_pool_create(&held_pool, pchild) != APR_SUCCESS
        || apr_thread_mutex_create(&held_lock, APR_THREAD_MUTEX_DEFAULT,
                                   pchild) != APR_SUCCESS) {
        held_lock = NULL;
        return;
    }
    held = apr_hash_make(held_pool);
    /* (a pool of its own, cleared before pchild's cleanups destroy the
     * lock) */
    apr_pool_cleanup_register(held_pool, NULL, let_all_go,
                              apr_pool_cleanup_null);
}

static apr_status_t release_cleanup(void *data)
{
    release(data);
    return APR_SUCCESS;
}

/* Drop the table's reference to siblings unasked for since HELD_IDLE.
 * Under the lock. */
static void sweep(apr_time_t now)
{
    apr_hash_index_t *hi;

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
    if (held_lock && apr_thread_mutex_lock(held_lock) == APR_SUCCESS) {
        if (now - swept >= HELD_SWEEP) {
            sweep(now);
        }
        apr_thread_mutex_unlock(held_lock);
    }
}

const adf_held_t *adf_held_get(request_rec *r, const char *path,
                               const adf_ident_t *id, apr_uint64_t mnt,
                               const adf_ident_t *src)
{
    adf_held_t *h;

    if (!held_lock || apr_thread_mutex_lock(held_lock) != APR_SUCCESS) {
        return NULL;
    }
    h = apr_hash_get(held, path, APR_HASH_KEY_STRING);
    if (h && h->mnt == mnt && adf_ident_same(&h->id, id)
        && adf_ident_same(&h->src, src)) {
        h->used = r->request_time;
        apr_atomic_inc32(&h->refs);
    }
    else {
        h = NULL;
    }
    if (r->request_time - swept >= HELD_SWEEP) {
        sweep(r->request_time);
    }
    apr_thread_mutex_unlock(held_lock);
    if (h) {
        apr_pool_cleanup_register(r->pool, h, release_cleanup,
                                  apr_pool_cleanup_null);
    }
    return h;
}

void adf_held_put(const char *path, int fd, const adf_ident_t *id,
                  apr_uint64_t mnt, const adf_ident_t *src,
                  const unsigned char *digest)
{
    adf_held_t *h, *old;
    void *base;

    if (!held_lock || id->size <= 0 || id->size > ADF_HELD_SIZE_MAX
        || !mnt) {
        return;
    }
    base = mmap(NULL, (size_t)id->size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        return;
    }
    if (!(h = calloc(1, sizeof(*h))) || !(h->path = strdup(path))) {
        free(h);
        munmap(base, (size_t)id->size);
        return;
    }
    h->id = *id;
    h->mnt = mnt;
    h->src = *src;
    memcpy(h->digest, digest, ADF_DIGEST_LEN);
    h->base = base;
    h->len = (apr_size_t)id->size;
    h->refs = 1;                /* the table's */
    h->used = apr_time_now();
    if (apr_thread_mutex_lock(held_lock) != APR_SUCCESS) {
        release(h);
        return;
    }
    if ((old = apr_hash_get(held, path, APR_HASH_KEY_STRING))) {
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
    apr_thread_mutex_unlock(held_lock);
    if (h) {
        release(h);             /* full of siblings in use */
    }
}

const unsigned char *adf_held_digest(const adf_held_t *h)
{
    return h->digest;
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
