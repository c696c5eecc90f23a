/* The compressed cache's shared queue and its lock; see adf_cache_queue.h.
 *
 * The lock is a robust, process-shared pthread mutex in the segment: a
 * holder killed with -9 leaves the next one EOWNERDEAD, and every step
 * under it leaves the queue consistent, so the next one just goes on. */
#include "adf_cache_queue.h"

#include <apr_atomic.h>

#include <errno.h>

void adf_cache_lock_init(adf_cache_shared_t *sh)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&sh->lock, &a);
    pthread_mutexattr_destroy(&a);
}

int adf_cache_lock(adf_cache_shared_t *sh)
{
    int rc = pthread_mutex_lock(&sh->lock);

    if (rc == EOWNERDEAD) {
        /* Its holder was killed; every step leaves the queue whole. */
        pthread_mutex_consistent(&sh->lock);
        rc = 0;
    }
    return rc;
}

void adf_cache_unlock(adf_cache_shared_t *sh)
{
    pthread_mutex_unlock(&sh->lock);
}

int adf_cache_queue_push(adf_cache_shared_t *sh, const adf_cache_item_t *it)
{
    if (sh->count == ADF_CACHE_QUEUE) {
        return 0;
    }
    sh->queue[(sh->head + sh->count) % ADF_CACHE_QUEUE] = *it;
    sh->count++;
    return 1;
}

/* A slot's vkey is written last and read before and after its dict: a
 * reader that sees it unchanged read the dict set with it (one writer). */
void adf_cache_kept_set(adf_cache_shared_t *sh, apr_uint64_t vkey,
                        apr_uint64_t dict)
{
    apr_uint32_t i = (apr_uint32_t)(vkey % ADF_CACHE_KEPT);

    apr_atomic_set64(&sh->kept[i].vkey, 0);
    apr_atomic_set64(&sh->kept[i].dict, dict);
    apr_atomic_set64(&sh->kept[i].vkey, vkey);
}

apr_uint64_t adf_cache_kept_get(adf_cache_shared_t *sh, apr_uint64_t vkey)
{
    apr_uint32_t i = (apr_uint32_t)(vkey % ADF_CACHE_KEPT);
    apr_uint64_t dict;

    if (apr_atomic_read64(&sh->kept[i].vkey) != vkey) {
        return 0;
    }
    dict = apr_atomic_read64(&sh->kept[i].dict);
    return apr_atomic_read64(&sh->kept[i].vkey) == vkey ? dict : 0;
}
