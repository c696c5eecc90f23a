/* What a child remembers of the stored files it checked (adf_memo.h).
 * A table per child under one lock, keyed by the file's identity; it is
 * emptied when full rather than kept in order: a site with more stored
 * files than that checks some of them again now and then. */
#include "adf_memo.h"

#include <apr_hash.h>
#include <apr_thread_mutex.h>
#include <string.h>

#define MEMO_MAX 8192           /* files a child remembers as checked */

typedef struct {
    adf_ident_t file;
    apr_uint64_t mnt;
} memo_key_t;

typedef struct {
    memo_key_t key;
    adf_ident_t src;            /* checked as holding this version */
    int kind;
    adf_memo_t found;
} memo_t;

/* APR's default hash takes a key byte by byte: some 500 instructions for
 * this one, more than the rest of a sibling's check.  The identity's
 * words mixed by multiplication spread as well (apr_hash compares whole
 * keys on a match). */
static unsigned int memo_hash(const char *key, apr_ssize_t *klen)
{
    const memo_key_t *k = (const memo_key_t *)key;
    const apr_uint64_t mix = APR_UINT64_C(0x9e3779b97f4a7c15);
    apr_uint64_t h;

    h = (k->file.ino ^ k->file.dev) * mix;
    h = (h ^ (apr_uint64_t)k->file.size ^ k->mnt) * mix;
    h = (h ^ (apr_uint64_t)k->file.mtime.sec
         ^ ((apr_uint64_t)k->file.mtime.nsec << 34)) * mix;
    h = (h ^ (apr_uint64_t)k->file.ctime.sec
         ^ ((apr_uint64_t)k->file.ctime.nsec << 34)) * mix;
    return (unsigned int)(h >> 32);
}

static apr_pool_t *memo_pool;
static apr_hash_t *memo;
static apr_thread_mutex_t *memo_lock;

void adf_memo_child_init(apr_pool_t *pchild)
{
    if (apr_pool_create(&memo_pool, pchild) != APR_SUCCESS
        || apr_thread_mutex_create(&memo_lock, APR_THREAD_MUTEX_DEFAULT,
                                   pchild) != APR_SUCCESS) {
        memo_lock = NULL;
        return;
    }
    memo = apr_hash_make_custom(memo_pool, memo_hash);
}

/* The hash key: the identity's fields, padding zeroed. */
static void key_of(memo_key_t *k, const adf_ident_t *file, apr_uint64_t mnt)
{
    memset(k, 0, sizeof(*k));
    k->file.dev = file->dev;
    k->file.ino = file->ino;
    k->file.size = file->size;
    k->file.mtime = file->mtime;
    k->file.ctime = file->ctime;
    k->mnt = mnt;
}

int adf_memo_get(const adf_ident_t *file, apr_uint64_t mnt,
                 const adf_ident_t *src, int kind, adf_memo_t *m)
{
    memo_key_t k;
    const memo_t *found;
    int ok = 0;

    if (!memo_lock || apr_thread_mutex_lock(memo_lock) != APR_SUCCESS) {
        return 0;
    }
    key_of(&k, file, mnt);
    found = apr_hash_get(memo, &k, sizeof(k));
    if (found && found->kind == kind && adf_ident_same(&found->src, src)) {
        *m = found->found;
        ok = 1;
    }
    apr_thread_mutex_unlock(memo_lock);
    return ok;
}

void adf_memo_put(const adf_ident_t *file, apr_uint64_t mnt,
                  const adf_ident_t *src, int kind, const adf_memo_t *m)
{
    memo_t *e;

    if (!memo_lock || apr_thread_mutex_lock(memo_lock) != APR_SUCCESS) {
        return;
    }
    if (apr_hash_count(memo) >= MEMO_MAX) {
        apr_pool_clear(memo_pool);
        memo = apr_hash_make_custom(memo_pool, memo_hash);
    }
    e = apr_pcalloc(memo_pool, sizeof(*e));
    key_of(&e->key, file, mnt);
    e->src = *src;
    e->kind = kind;
    e->found = *m;
    apr_hash_set(memo, &e->key, sizeof(e->key), e);
    apr_thread_mutex_unlock(memo_lock);
}
